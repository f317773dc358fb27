"""Who used the CPU while a workload ran (issue 23): /proc/PID/stat read as the kernel
writes it (names with blanks, parentheses, escapes), the kernel threads doing the target's
IO told from the rest, and the findings that say whose work a busy host did — on recorded
figures, and on real fio runs beside a real busy process that the test starts."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.analysis.cpuload import load_of, quoted
from iobench.analysis.measured import measured_findings
from iobench.probe.cpu import StepLoad
from iobench.probe.tasks import Task, attribute, io_thread, parse_task, used
from iobench.records import TargetRecord
from test_measured import _result, _run, _target


def _stat(pid: int, comm: bytes, utime: int, stime: int, start: int, flags: int = 0) -> bytes:
    rest = [b"S", b"1", b"1", b"1", b"0", b"-1", str(flags).encode(), b"0", b"0", b"0", b"0"]
    rest += [str(utime).encode(), str(stime).encode(), b"0", b"0", b"20", b"0", b"1", b"0"]
    rest += [str(start).encode(), b"1000", b"10"]
    return str(pid).encode() + b" (" + comm + b") " + b" ".join(rest) + b"\n"


def test_proc_stat_names_are_read_as_the_kernel_writes_them() -> None:
    """The name ends at the last ")": a process may call itself ") R 1 (" to fool a reader
    that splits on blanks; bytes that are not UTF-8 become visible escapes."""
    t = parse_task(42, _stat(42, b"x) R 99 9 (y z", 300, 100, 5000))
    assert t == Task(42, "x) R 99 9 (y z", 5000, 400, False)
    t = parse_task(7, _stat(7, b"\xff\x1b[31mred\n", 1, 2, 3, flags=0x00200000))
    assert t is not None and t.comm == "\\xff\x1b[31mred\n" and t.kernel
    assert parse_task(1, b"1 (no end") is None and parse_task(1, b"1 (x) S 1") is None
    # Shown in a message: quoted, escaped, so it cannot pass for iobench's own words.
    assert quoted('a" (pid 1) 99 %, "b') == '"a\\" (pid 1) 99 %, \\"b"'
    assert quoted("\x1b[31mred\n\u202e") == '"\\x1b[31mred\\x0a\\u202e"'


def test_kernel_threads_doing_the_targets_io() -> None:
    def k(comm: str, kernel: bool = True) -> Task:
        return Task(1, comm, 0, 0, kernel)

    devices = ["loop3", "vda1"]
    for comm in ("kworker/u8:1-loop3", "kworker/u8:1+loop3", "loop3", "kworker/1:2-kthrotld",
                 "jbd2/vda1-8", "kworker/0:1H-kblockd"):  # fmt: skip
        assert io_thread(k(comm), devices), comm
    for comm in ("kworker/u8:1-loop13", "kworker/u8:1-writeback", "ksoftirqd/0", "loop30"):
        assert not io_thread(k(comm), devices), comm
    assert not io_thread(k("loop3", kernel=False), devices)  # a process may call itself so
    assert io_thread(k("knbd0-recv"), ["nbd0"])


def test_who_used_the_cpu_between_two_readings() -> None:
    before = {(1, 10): Task(1, "hog", 10, 1000, False), (2, 10): Task(2, "gone", 10, 5, False),
              (3, 10): Task(3, "kworker/u8:1-writeback", 10, 50, True),
              (9, 10): Task(9, "iobench", 10, 70, False)}  # fmt: skip
    after = {(1, 10): Task(1, "hog", 10, 1160, False),
             (3, 10): Task(3, "kworker/u8:1-events", 10, 90, True),  # did loop3's IO between
             (4, 500): Task(4, "new", 500, 30, False),  # started after the first reading
             (5, 5): Task(5, "unseen", 5, 900, False),  # older, missed by the first reading
             (9, 10): Task(9, "iobench", 10, 80, False)}  # fmt: skip
    spent = used(before, after, since=400)
    assert sorted((t.pid, n) for t, n, _ in spent) == [(1, 160), (3, 40), (4, 30), (9, 10)]
    got = attribute(spent, 400, ["loop3"], skip=9, io_seen={(3, 10)})
    assert got["io_threads_pct"] == 10.0
    assert [(p["pid"], p["pct"], p["io"]) for p in got["processes"]] == [
        (1, 40.0, False), (3, 10.0, True), (4, 7.5, False)
    ]  # fmt: skip


def _host(busy: float, fio: float, *procs: tuple[int, str, float, bool], io: float = 0.0) -> Any:
    return {
        "busy_pct": busy, "max_cpu_busy_pct": busy, "cpus": 2, "fio_pct": fio,
        "iobench_pct": 0.5, "io_threads_pct": io,
        "processes": [{"pid": p, "comm": c, "pct": v, "kernel": False, "io": i}
                      for p, c, v, i in procs],
    }  # fmt: skip


def _cpu_finding(host: Any, t: TargetRecord | None = None, **m: Any) -> Any:
    found = [f for f in measured_findings(_run(t or _target(transport="nvme"),
                                               _result(host_cpu=host, **m)))
             if f.id in ("fio-cpu-bound", "host-busy")]  # fmt: skip
    return found[0] if found else None


def test_a_host_busy_with_other_work_is_not_fio_cpu_bound() -> None:
    """The issue's case: a 96 MB/s read at which fio used 1 % while another process kept
    the CPUs busy."""
    f = _cpu_finding(_host(97.0, 1.0, (4242, "hog", 80.0, False), (77, "x", 10.0, False)))
    assert f.id == "host-busy" and f.severity == "warning"
    assert ('the host\'s 2 CPUs were 97 % busy with other work ("hog" (pid 4242) 80 %, "x" '
            '(pid 77) 10 %; 6 % by smaller processes') in f.message  # fmt: skip
    assert "fio used 1 %: its figures may be lower than the storage allows" in f.message
    assert f.data["fio_pct"] == 1.0 and f.data["processes"][0]["comm"] == "hog"
    # Beyond the three named, the rest of the processes seen are counted, so the parts add
    # up to what the host did.
    five = [(n, f"p{n}", 15.0, False) for n in range(1, 6)]
    f = _cpu_finding(_host(97.0, 1.0, *five))
    assert ('"p3" (pid 3) 15 %, 2 more 30 %; 20 % by smaller processes, ones that ended '
            "meanwhile and interrupts); fio used 1 %") in f.message  # fmt: skip
    # fio and the loop device's kernel threads doing its IO used most of it: fio's.
    f = _cpu_finding(_host(97.0, 40.0, (12, "kworker/u8:1-loop3", 35.0, True),
                           (77, "x", 10.0, False), io=35.0))  # fmt: skip
    assert f.id == "fio-cpu-bound"
    assert "97 % busy, more for fio than for other work (fio used 40 %, the kernel " in f.message
    assert '"kworker/u8:1-loop3" (pid 12) 35 %' in f.message
    # fio's jobs at a full CPU each: fio's, whatever the host did.
    f = _cpu_finding(_host(60.0, 45.0), cpu={"usr_pct": 30.0, "sys_pct": 65.0})
    assert f.id == "fio-cpu-bound" and "each kept 95 % of a CPU busy" in f.message
    # A host with room to spare: nothing to say.
    assert _cpu_finding(_host(80.0, 2.0, (4242, "hog", 78.0, False))) is None
    # Stored before iobench named whose work it was: it says it does not know.
    f = _cpu_finding({"busy_pct": 98.0})
    assert f.id == "host-busy" and "whose work it was was not recorded" in f.message


def test_a_figure_at_a_throttle_was_not_lowered_by_the_load() -> None:
    limit = {"device": "loop3", "version": 1, "cgroup": "/vol", "read_bps": 100_000_000}
    ctx = {"throttles": {"limits": [limit]}}
    t = TargetRecord(0, "/mnt/a", "/dev/loop3", "block", None, ctx)
    f = _cpu_finding(_host(97.0, 1.0, (4242, "hog", 90.0, False)), t, bw=99_000_000.0)
    assert f is not None and f.id == "host-busy" and f.severity == "info", f
    assert "its read 94.4 MiB/s reached the throttle all the same (at-throttle)" in f.message


def test_the_share_of_a_process_is_read_back_from_stored_figures() -> None:
    load = load_of({"host_cpu": _host(90.0, 5.0, (1, "a", 50.0, False), io=3.0)})
    assert load is not None and load.fio_side_pct == 8.0 and load.others_pct == 50.0
    assert load.unseen_pct == 31.5 and not load.fios
    assert load_of({"host_cpu": {"busy_pct": "97"}}) is None
    bad = load_of({"host_cpu": {**_host(90.0, 5.0), "processes": [{"pid": "x"}, 3, None]}})
    assert bad is not None and bad.processes == ()


@pytest.mark.parametrize(
    ("busy", "read"),
    [
        ((35.0, 35.0), True),  # 70 % of one CPU between them: fio and its IO may take turns
        ((34.5, 34.5), False),  # 69 %: neither fio nor anything else held the figures back
        ((80.0, 0.0), True),  # one CPU 80 % busy
        ((17.5, 17.5, 17.5, 17.5), True),  # 4 CPUs, 17.5 % of all: 70 % of one
        ((17.0, 17.0, 17.0, 17.0), False),
        ((50.0, 50.0, 50.0, 50.0), True),  # half of all CPUs
    ],
)
def test_who_used_the_cpu_is_read_once_the_busy_time_adds_up_to_most_of_one_cpu(
    monkeypatch: pytest.MonkeyPatch, busy: tuple[float, ...], read: bool
) -> None:
    """A chain of fio's job and the kernel's workers can bound a point at 70 % of one CPU
    spread over CPUs none of which is busy (analysis.curves, TURNS_PCT): who used the CPU
    is read then too, or that chain could never be told."""
    import iobench.probe.cpu as cpu
    from iobench.analysis.curves import TURNS_PCT

    assert cpu.ATTRIBUTE_CHAIN_PCT <= TURNS_PCT
    ticks = 10_000
    before = {"cpu": (0, 0), **{f"cpu{n}": (0, 0) for n in range(len(busy))}}
    after = {f"cpu{n}": (round(ticks * (1 - b / 100)), ticks) for n, b in enumerate(busy)}
    after["cpu"] = (sum(i for i, _ in after.values()), ticks * len(busy))
    load = StepLoad([], before, {})
    monkeypatch.setattr(cpu, "cpu_times", lambda: after)
    monkeypatch.setattr(cpu, "read_tasks", dict)
    got = load.end()
    assert got is not None and got["cpus"] == len(busy)
    assert ("processes" in got, "io_threads_pct" in got) == (read, read), got


# -- on a real host -------------------------------------------------------------------------


def test_a_step_reads_who_used_the_cpu(hogs: list[int]) -> None:
    """Without fio: the hogs named, with their share; iobench's own left out. (Each hog's
    share is lower than half the host when other work runs too.)"""
    load = StepLoad.start([])
    time.sleep(2.0)
    got = load.end()
    assert got is not None and got["busy_pct"] >= 90, got
    named = {p["pid"]: p for p in got["processes"]}
    for n, pid in enumerate(hogs, 1):
        assert named[pid]["comm"] == f"iobench-hog-{n}" and named[pid]["pct"] >= 3, got
    assert os.getpid() not in named and got["fio_pct"] == 0.0


READ = """\
name = "r"
description = "one short read"
[defaults]
runtime = "2s"
size = "8M"
ioengine = "libaio"
direct = true
[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
iodepth = 4
numjobs = 1
"""


def _run_read(cli: Cli, tmp_path: Path) -> dict[str, Any]:
    target = tmp_path / "t"
    target.mkdir(exist_ok=True)
    suite = tmp_path / "r.toml"
    suite.write_text(READ)
    code, out, err = cli("run", str(target), "--suite", str(suite), "--json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.mark.fio
def test_a_real_run_beside_busy_processes_names_them(
    cli: Cli, tmp_path: Path, real_fio: str, hogs: list[int]
) -> None:
    doc = _run_read(cli, tmp_path)
    (r,) = doc["results"]
    host = r["host_cpu"]
    assert host["busy_pct"] >= 95, host  # two busy loops on two CPUs
    named = {p["pid"]: p for p in host["processes"]}
    assert set(hogs) <= set(named), host
    (f,) = [w for w in doc["warnings"] if w["id"] in ("host-busy", "fio-cpu-bound")]
    assert f["id"] == "host-busy", f
    # The message names the three other processes that used the most, as data has them
    # (with more load on the host, those may be others than the test's two).
    top = [p for p in f["data"]["processes"] if not p["io"]][:3]
    for p in top:
        assert f'"{p["comm"]}" (pid {p["pid"]})' in f["message"], f["message"]
    assert "its figures may be lower than the storage allows" in f["message"]
    assert f["data"]["processes"] == host["processes"]
    # show --json carries what run stored.
    code, out, _ = cli("show", str(doc["run_id"]), "--json")
    assert code == 0 and json.loads(out)["results"][0]["host_cpu"] == host


@pytest.mark.fio
def test_a_real_run_measures_fios_own_share(cli: Cli, tmp_path: Path, real_fio: str) -> None:
    """fio's processes, measured by iobench (the CPU time of the processes it waited for),
    hold at least the CPU fio says its job used (its usr + sys, % of the job's runtime)."""
    doc = _run_read(cli, tmp_path)
    (r,) = doc["results"]
    host, cpu = r["host_cpu"], r["cpu"]
    job_cpu_s = (cpu["usr_pct"] + cpu["sys_pct"]) / 100 * r["read"]["runtime_ms"] / 1000
    from datetime import datetime

    wall_s = (
        datetime.fromisoformat(r["finished_at"].replace("Z", "+00:00"))
        - datetime.fromisoformat(r["started_at"].replace("Z", "+00:00"))
    ).total_seconds()
    fio_cpu_s = host["fio_pct"] / 100 * host["cpus"] * wall_s
    # fio's rounding (two decimals of a per cent) and the step's times (milliseconds)
    assert fio_cpu_s >= 0.8 * job_cpu_s - 0.02, (host, cpu, wall_s)
    assert fio_cpu_s > 0
    assert not {p["comm"] for p in host.get("processes", [])} & {"iobench-hog-1"}


def test_the_loads_texts_and_data_say_each_figure_and_whose_it_is() -> None:
    """What a CPU finding says and carries (docs/findings.md, "Who used the CPU"), from a
    stored ``host_cpu``: fio's share and its kernel threads', the three other processes
    that used the most with the rest summed, the time no process was seen to use, and the
    figures behind them; entries a hostile or damaged store holds are skipped."""
    from iobench.analysis.cpuload import (
        _pct,
        busiest_io_thread,
        busy_data,
        fio_leads,
        fio_share_text,
        fio_text,
        other_work_text,
        others_text,
    )

    def proc(pid: Any, comm: Any, pct: Any, *, io: bool = False) -> dict[str, Any]:
        return {"pid": pid, "comm": comm, "pct": pct, "kernel": io, "io": io}

    processes = [
        proc(13, "kworker/u8:2-loop3", 8.0, io=True),
        proc(12, "kworker/u8:1-loop3", 12.0, io=True),
        proc(4242, "i23-hog", 20.0),
        proc(77, "chromium", 10.0),
        proc(9, "x\x1b[31m", 5.0),
        proc(10, "y", 0.4),
        proc(11, None, 0.2),
        {"pid": 3, "pct": 0.3},
        proc("1", "pid-as-text", 5.0),
        proc(2, "pct-as-bool", True),
        "not a process",
    ]
    host = {"busy_pct": 97.0, "cpus": 2, "fio_pct": 30.0, "io_threads_pct": 20.0,
            "iobench_pct": 0.4, "processes": processes}  # fmt: skip
    load = load_of({"host_cpu": host})
    assert load is not None
    assert [(c.pid, c.comm, c.kernel, c.io) for c in load.processes] == [
        (13, "kworker/u8:2-loop3", True, True), (12, "kworker/u8:1-loop3", True, True),
        (4242, "i23-hog", False, False), (77, "chromium", False, False),
        (9, "x\x1b[31m", False, False), (10, "y", False, False), (11, "", False, False),
        (3, "", False, False),
    ]  # fmt: skip
    assert (load.fio_side_pct, load.others_pct, load.unseen_pct) == (50.0, 35.9, 10.7)
    busiest = busiest_io_thread(load)
    assert busiest is not None and busiest.pid == 12 and load.one_cpu_pct(busiest) == 24.0
    threads = '"kworker/u8:2-loop3" (pid 13) 8 %, "kworker/u8:1-loop3" (pid 12) 12 %'
    assert fio_text(load) == f"fio used 30 %, the kernel threads doing its IO 20 % ({threads})"
    others = ('"i23-hog" (pid 4242) 20 %, "chromium" (pid 77) 10 %, "x\\x1b[31m" (pid 9) 5 %, '
              "3 more 0.9 %; 11 % by smaller processes, ones that ended meanwhile and "
              "interrupts")  # fmt: skip
    assert others_text(load) == others
    assert fio_share_text(load) == (
        "the host's 2 CPUs were 97 % busy, more for fio than for other work "
        f"(fio used 30 %, the kernel threads doing its IO 20 % ({threads}); other work: "
        f"{others})"
    )
    assert other_work_text(load) == (
        f"the host's 2 CPUs were 97 % busy with other work ({others}); {fio_text(load)}"
    )
    assert busy_data(load, 41.5) == {
        "busy_pct": 97.0, "fio_job_pct": 41.5, "fio_pct": 30.0, "io_threads_pct": 20.0,
        "processes": [{"pid": c.pid, "comm": c.comm, "pct": c.pct, "kernel": c.kernel,
                       "io": c.io} for c in load.processes],
    }  # fmt: skip
    assert busy_data(load, None)["processes"][1] == {
        "pid": 12, "comm": "kworker/u8:1-loop3", "pct": 12.0, "kernel": True, "io": True
    }  # fmt: skip
    # Kernel threads under half a per cent are not said; no CPU count, no figure for it.
    quiet = load_of({"host_cpu": {**host, "io_threads_pct": 0.4, "cpus": None}})
    assert quiet is not None and fio_text(quiet) == "fio used 30 %"
    half = load_of({"host_cpu": {**host, "io_threads_pct": 0.5}})
    assert half is not None and fio_text(half).startswith("fio used 30 %, the kernel threads")
    assert other_work_text(quiet).startswith("the host's CPUs were 97 % busy with other work")
    assert quiet.one_cpu_pct(busiest) == 12.0
    # Nothing but fio and the rest unseen; no process named at all.
    alone = load_of({"host_cpu": {"busy_pct": 60.0, "cpus": 2, "fio_pct": 50.0}})
    assert alone is not None and busiest_io_thread(alone) is None
    assert (
        others_text(alone) == "10 % by smaller processes, ones that ended meanwhile and interrupts"
    )
    assert fio_share_text(alone) == (
        "the host's 2 CPUs were 60 % busy, more for fio than for other work (fio used 50 %; "
        "other work: 10 % by smaller processes, ones that ended meanwhile and interrupts)"
    )
    idle = load_of({"host_cpu": {"busy_pct": 50.5, "cpus": 2, "fio_pct": 50.0}})
    assert idle is not None and others_text(idle) == "" and idle.unseen_pct == 0.5
    assert fio_share_text(idle).endswith("more for fio than for other work (fio used 50 %)")
    assert (
        other_work_text(idle) == "the host's 2 CPUs were 50 % busy with other work; fio used 50 %"
    )
    unrecorded = load_of({"host_cpu": {"busy_pct": 97.0, "cpus": 2}})
    assert unrecorded is not None and other_work_text(unrecorded) == (
        "the host's 2 CPUs were 97 % busy while it ran (whose work it was was not recorded: "
        "a result stored before iobench named it)"
    )
    # fio leads when its share is some, and at least the others' and the unseen time.
    assert fio_leads(1.0, 1.0, 1.0) and not fio_leads(0.0, 0.0, 0.0)
    assert not fio_leads(1.0, 1.01, 0.0) and not fio_leads(1.0, 0.0, 1.01)
    # Shares under 1 % keep a decimal; 0 is 0.
    assert [_pct(v) for v in (0.0, 0.04, 0.5, 0.96, 1.0, 12.5)] == [
        "0 %", "0.0 %", "0.5 %", "1.0 %", "1 %", "12 %"
    ]  # fmt: skip
    # Quoted as the process's own text: quotes, backslashes and what does not print escaped.
    assert quoted('a"b\\c\x01\x7f\u200b\u2028é') == '"a\\"b\\\\c\\x01\\x7f\\u200b\\u2028é"'
    assert quoted("X-ray") == '"X-ray"'
    # Kernel threads counted but none named: their share alone; the unseen time at 1 %.
    unnamed = load_of({"host_cpu": {"busy_pct": 51.0, "cpus": 2, "fio_pct": 30.0,
                                    "io_threads_pct": 20.0}})  # fmt: skip
    assert unnamed is not None
    assert fio_text(unnamed) == "fio used 30 %, the kernel threads doing its IO 20 %"
    assert others_text(unnamed) == (
        "1 % by smaller processes, ones that ended meanwhile and interrupts"
    )
    assert fio_text(unrecorded) == "fio used 0 %"
