"""Who used the host's CPU while a workload ran, and what that says about its figures. Pure.

A result's ``host_cpu`` (iobench.probe.cpu.StepLoad) holds how busy the host was and, since
issue 23, whose work it was: fio's processes (``fio_pct``), iobench's own, the kernel
threads doing the target's IO (``io_threads_pct``), and the processes that used the most
(``processes``), each in % of all CPUs' time. fio was CPU-bound only when fio (and the
threads doing its IO) used the CPU; a host busy with other work may have held the figures
down, but that is not fio's limit, and the finding says whose work it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The host's CPUs this busy (% of all) leave fio none to spare.
HOST_BOUND_PCT = 95.0
NAMED = 3  # other processes a message names


@dataclass(frozen=True)
class Consumer:
    pid: int
    comm: str
    pct: float  # of all CPUs' time
    kernel: bool
    io: bool  # a kernel thread doing the target's IO

    def shown(self) -> str:
        """``"i23-hog" (pid 4242)``: the name quoted and escaped (it is the process's own
        text), so it cannot pass for iobench's words."""
        return f"{quoted(self.comm)} (pid {self.pid})"


@dataclass(frozen=True)
class Load:
    """The host's CPU while one workload ran (``host_cpu`` of its metrics)."""

    busy_pct: float
    cpus: int | None
    fio_pct: float | None  # None: not recorded (results stored before issue 23)
    io_threads_pct: float | None  # None: not sampled (the host was not busy)
    iobench_pct: float | None
    processes: tuple[Consumer, ...] = field(default=())

    @property
    def attributed(self) -> bool:
        return self.fio_pct is not None

    @property
    def fio_side_pct(self) -> float:
        """fio's processes and the kernel threads doing its IO."""
        return round((self.fio_pct or 0.0) + (self.io_threads_pct or 0.0), 1)

    @property
    def others_pct(self) -> float:
        """The other processes iobench named (those that used the most)."""
        return round(sum(p.pct for p in self.others()), 1)

    @property
    def unseen_pct(self) -> float:
        """Busy time no process was seen to use: smaller processes than those named, ones
        that ended meanwhile, interrupts."""
        seen = self.fio_side_pct + (self.iobench_pct or 0.0) + self.others_pct
        return round(max(0.0, self.busy_pct - seen), 1)

    @property
    def fios(self) -> bool:
        """fio's work was the most of the busy time (:func:`fio_leads`)."""
        return self.attributed and fio_leads(self.fio_side_pct, self.others_pct, self.unseen_pct)

    def others(self) -> list[Consumer]:
        return [p for p in self.processes if not p.io]

    def io_threads(self) -> list[Consumer]:
        return [p for p in self.processes if p.io]

    def one_cpu_pct(self, c: Consumer) -> float:
        """``c``'s share as % of one CPU (a thread can use one CPU at most)."""
        return c.pct * (self.cpus or 1)


def fio_leads(fio: float, others: float, unseen: float) -> bool:
    """fio (with the kernel threads doing its IO) used more of the CPU than the other
    processes named, and more than the time no process was seen to use: only then was
    the host busy with fio's work."""
    return fio > 0 and fio >= others and fio >= unseen


def quoted(text: str) -> str:
    """``text`` in double quotes, with quotes, backslashes and every character that does
    not print escaped."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return '"' + "".join(out) + '"'


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None


def _consumer(d: Any) -> Consumer | None:
    if not isinstance(d, dict):
        return None
    pct, pid = _number(d.get("pct")), d.get("pid")
    if pct is None or not isinstance(pid, int):
        return None
    comm = d.get("comm")
    return Consumer(pid, str(comm or ""), pct, bool(d.get("kernel")), bool(d.get("io")))


def load_of(metrics: dict[str, Any] | None) -> Load | None:
    """The ``host_cpu`` of a result's metrics; None when it has none."""
    host = (metrics or {}).get("host_cpu")
    busy = _number((host or {}).get("busy_pct"))
    if not isinstance(host, dict) or busy is None:
        return None
    cpus = host.get("cpus")
    found = (_consumer(d) for d in host.get("processes") or [])
    return Load(
        busy_pct=busy,
        cpus=cpus if isinstance(cpus, int) and cpus > 0 else None,
        fio_pct=_number(host.get("fio_pct")),
        io_threads_pct=_number(host.get("io_threads_pct")),
        iobench_pct=_number(host.get("iobench_pct")),
        processes=tuple(c for c in found if c is not None),
    )


def _pct(value: float) -> str:
    return f"{value:.0f} %" if value >= 1 or value == 0 else f"{value:.1f} %"


def fio_text(load: Load) -> str:
    """``fio used 4 %`` (of all CPUs), with the kernel threads doing its IO when they
    used some: ``fio used 30 %, the kernel threads doing its IO 20 % ("kworker/u8:1-loop3"
    (pid 12) 18 %)``."""
    text = f"fio used {_pct(load.fio_pct or 0.0)}"
    if load.io_threads_pct and load.io_threads_pct >= 0.5:
        named = ", ".join(f"{c.shown()} {_pct(c.pct)}" for c in load.io_threads()[:NAMED])
        text += f", the kernel threads doing its IO {_pct(load.io_threads_pct)}"
        text += f" ({named})" if named else ""
    return text


def others_text(load: Load) -> str:
    """``"i23-hog" (pid 4242) 48 %, "chromium" (pid 77) 20 %, "x" (pid 9) 5 %, 2 more 6 %;
    4 % by smaller processes, ones that ended meanwhile and interrupts`` (of all CPUs): the
    parts add up to the other work."""
    others = load.others()
    parts = [f"{c.shown()} {_pct(c.pct)}" for c in others[:NAMED]]
    if more := others[NAMED:]:
        parts.append(f"{len(more)} more {_pct(sum(c.pct for c in more))}")
    text = ", ".join(parts)
    if load.unseen_pct >= 1:
        unseen = f"{_pct(load.unseen_pct)} by smaller processes, ones that ended meanwhile "
        unseen += "and interrupts"
        return f"{text}; {unseen}" if text else unseen
    return text


def busy_data(load: Load, per_job: float | None) -> dict[str, Any]:
    """A CPU finding's ``data``: the figures behind it (docs/findings.md)."""
    return {
        "busy_pct": load.busy_pct,
        "fio_job_pct": per_job,
        "fio_pct": load.fio_pct,
        "io_threads_pct": load.io_threads_pct,
        "processes": [
            {"pid": c.pid, "comm": c.comm, "pct": c.pct, "kernel": c.kernel, "io": c.io}
            for c in load.processes
        ],
    }


def _cpus(load: Load) -> str:
    return f"host's {load.cpus} CPUs" if load.cpus else "host's CPUs"


def fio_share_text(load: Load) -> str:
    """Why a busy host's load was fio's: ``the host's 2 CPUs were 97 % busy, more for fio
    than for other work (fio used 60 %, ...)``."""
    others = others_text(load)
    return (
        f"the {_cpus(load)} were {load.busy_pct:.0f} % busy, more for fio than for other work "
        f"({fio_text(load)}" + (f"; other work: {others}" if others else "") + ")"
    )


def other_work_text(load: Load) -> str:
    """``the host's CPUs were 97 % busy with other work ("i23-hog" (pid 4242) 48 %, ...);
    fio used 1 %``."""
    if not load.attributed:
        return (
            f"the {_cpus(load)} were {load.busy_pct:.0f} % busy while it ran (whose work it "
            "was was not recorded: a result stored before iobench named it)"
        )
    others = others_text(load)
    return (
        f"the {_cpus(load)} were {load.busy_pct:.0f} % busy with other work"
        + (f" ({others})" if others else "")
        + f"; {fio_text(load)}"
    )


def busiest_io_thread(load: Load) -> Consumer | None:
    threads = load.io_threads()
    return max(threads, key=lambda c: c.pct) if threads else None
