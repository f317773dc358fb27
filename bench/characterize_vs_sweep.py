#!/usr/bin/env python3
"""Does `iobench characterize` find what a full sweep finds, in a fraction of its time?

For each pair of caps, builds a capped volume (a loop device over a file of random data in
/dev/shm, throttled by a cgroup, as DESIGN.md describes), then runs the full matrix with
`iobench sweep` (5 block sizes x 8 queue depths) and the adaptive `iobench characterize`,
and prints both answers (IOPS limit, bandwidth limit, crossover block size), how far apart
they are, how far each is from the caps set, the seconds of IO each ran and the wall time
of each.

    sudo .venv/bin/python bench/characterize_vs_sweep.py [--runtime 5] [--point-time 15]
        [--method fast|steady] [--runs 1] [--no-sweep]

Seconds of IO: the sum, over a run's results, of fio's runtime (`runtime_ms`, the time it
measured) and the ramp before it (`params.ramp_s`); wall: from starting the iobench
command to its end (its start-up, checks, fio's starts and stops, storing). `--no-sweep`
runs characterize only (the sweep takes about 4.5 minutes a pair); `--runs N` runs it N
times on each volume and prints each run.

Needs root (loop devices, cgroups). Everything it creates is removed afterwards. Never run
it while another fio load runs on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MiB = 1 << 20
# (IOPS, MiB/s): crossovers near 41 KiB and 16 KiB (16 KiB is a sweep block size: it sits on
# both plateaus), and near 92 KiB, between the sweep's 64 KiB and 256 KiB and between the
# sizes characterize checks on either side of it (32 KiB and 256 KiB).
PAIRS = [(5000, 200), (2000, 32), (3000, 270)]
SWEEP = ["--bs", "4k,16k,64k,256k,1m", "--qd", "1,2,4,8,16,32,64,128"]
V1 = Path("/sys/fs/cgroup/blkio")
KEYS = ("iops", "bw_bytes", "crossover_bs")


def capped(size: int, iops: int, mib_s: int, stack: list[Any]) -> tuple[str, Path]:
    backing = Path(f"/dev/shm/iobench-bench-{os.getpid()}.img")
    stack.append(lambda: backing.unlink(missing_ok=True))
    with open(backing, "wb") as f:
        for _ in range(size // MiB):
            f.write(os.urandom(MiB))
    dev = subprocess.run(
        ["losetup", "--find", "--show", str(backing)], capture_output=True, text=True, check=True
    ).stdout.strip()
    stack.append(lambda: subprocess.run(["losetup", "-d", dev], check=False))
    st = Path(dev).stat()
    majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    if (V1 / "blkio.throttle.read_iops_device").exists():
        group = V1 / f"iobench-bench-{os.getpid()}"
        group.mkdir()
        (group / "blkio.throttle.read_iops_device").write_text(f"{majmin} {iops}")
        (group / "blkio.throttle.read_bps_device").write_text(f"{majmin} {mib_s * MiB}")
    else:
        group = Path("/sys/fs/cgroup") / f"iobench-bench-{os.getpid()}"
        group.mkdir()
        (group / "io.max").write_text(f"{majmin} riops={iops} rbps={mib_s * MiB}")
    stack.append(lambda: group.rmdir())
    return dev, group


def iobench(group: Path, db: Path, *args: str) -> tuple[dict[str, Any], float]:
    argv = [sys.executable, "-m", "iobench", "--db", str(db), *args, "--json"]
    procs = group / "cgroup.procs"
    started = time.monotonic()
    out = subprocess.run(
        ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh", *argv],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    took = time.monotonic() - started
    return json.loads(out), took


def io_seconds(db: Path, run_id: int) -> float:
    """fio's measured time and the ramp before it, summed over the run's results."""
    out = subprocess.run(
        [sys.executable, "-m", "iobench", "--db", str(db), "show", str(run_id), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    total = 0.0
    for r in json.loads(out)["results"]:
        runtime_ms = max((r[d] or {}).get("runtime_ms") or 0 for d in ("read", "write"))
        total += runtime_ms / 1000 + float(r["params"]["ramp_s"])
    return total


def limits_of(doc: dict[str, Any]) -> dict[str, Any]:
    if doc.get("kind") == "characterization":
        return dict(doc["limits"])
    (lim,) = doc["analysis"]["limits"]
    return dict(lim["limits"])


def fmt(key: str, v: float | None) -> str:
    if v is None:
        return "none"
    if key == "iops":
        return f"{v:,.0f}"
    if key == "bw_bytes":
        return f"{v / MiB:,.1f} MiB/s"
    return f"{v / 1024:,.1f} KiB"


def value(lim: dict[str, Any], key: str) -> float | None:
    return lim[key]["value"] if lim.get(key) else None


def vs_cap(v: float | None, cap: float) -> str:
    return "-" if v is None else f"{(v / cap - 1) * 100:+.1f}%"


def interval(lim: dict[str, Any], key: str) -> str:
    """The 95 % interval's half-width, in % of the value."""
    e = lim.get(key)
    if not e:
        return "-"
    return f"±{(e['high'] - e['low']) / 2 / e['value'] * 100:.1f}%"


def measure(
    iops: int, mib_s: int, args: argparse.Namespace
) -> tuple[dict[str, Any] | None, list[tuple[dict[str, Any], float, float]]]:
    """The sweep's document (with its IO seconds and wall time under ``_io`` and ``_wall``)
    and each characterize run's (document, IO seconds, wall)."""
    stack: list[Any] = []
    chars = []
    sweep = None
    try:
        dev, group = capped(256 * MiB, iops, mib_s, stack)
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            if not args.no_sweep:
                sweep, t_sweep = iobench(
                    group, db, "sweep", dev, *SWEEP, "--runtime", f"{args.runtime}s",
                    "--ramp", "1s",
                )  # fmt: skip
                sweep["_io"], sweep["_wall"] = io_seconds(db, sweep["run_id"]), t_sweep
            for _ in range(args.runs):
                char, t_char = iobench(
                    group, db, "characterize", dev, "--point-time", f"{args.point_time}s",
                    "--method", args.method,
                )  # fmt: skip
                chars.append((char, io_seconds(db, char["run_id"]), t_char))
    finally:
        for undo in reversed(stack):
            undo()
    return sweep, chars


def rows_of(
    iops: int, mib_s: int, sweep: dict[str, Any] | None, char: dict[str, Any], io: float,
    wall: float,
) -> list[str]:  # fmt: skip
    caps = {"iops": iops, "bw_bytes": mib_s * MiB, "crossover_bs": mib_s * MiB / iops}
    a = limits_of(sweep) if sweep else {}
    b = limits_of(char)
    name = f"{iops} IOPS, {mib_s} MiB/s"
    rows = []
    for key in KEYS:
        va, vb = value(a, key), value(b, key)
        apart = f"{(vb / va - 1) * 100:+.1f}%" if va and vb else "-"
        rows.append(
            f"{name:22} {key:12} {fmt(key, va):>13} {fmt(key, vb):>13} {interval(b, key):>7} "
            f"{apart:>7} {vs_cap(va, caps[key]):>7} {vs_cap(vb, caps[key]):>7}"
        )
        name = ""
    io_s = f"{sweep['_io']:.0f} s" if sweep else "-"
    wall_s = f"{sweep['_wall']:.0f} s" if sweep else "-"
    points = len(sweep["results"]) if sweep else "-"
    counts = f"({points} vs {char['points']} points)"
    rows.append(f"{'':22} {'seconds of IO':12} {io_s:>13} {io:>11.1f} s   {counts}")
    rows.append(f"{'':22} {'wall':12} {wall_s:>13} {wall:>11.1f} s")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", default="5", help="sweep: seconds per point (default 5)")
    ap.add_argument("--point-time", default="15", help="characterize: most seconds per point")
    ap.add_argument("--method", default="fast", choices=("fast", "steady"))
    ap.add_argument("--runs", type=int, default=1, help="characterize runs per volume")
    ap.add_argument("--no-sweep", action="store_true", help="characterize only")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root: loop devices and cgroups", file=sys.stderr)
        return 2
    sweep_says = (
        "no sweep"
        if args.no_sweep
        else f"sweep: {SWEEP[1]} x QD {SWEEP[3]}, {args.runtime} s + 1 s ramp per point"
    )
    print(
        f"{sweep_says}; characterize --method {args.method}: up to {args.point_time} s per "
        f"point, {args.runs} run(s) per volume"
    )
    columns = ("sweep", "characterize", "±95%", "apart", "s/cap", "c/cap")
    header = f"{'caps':22} {'limit':12} " + "{:>13} {:>13} {:>7} {:>7} {:>7} {:>7}".format(*columns)
    rows: list[str] = []
    for iops, mib_s in PAIRS:
        sweep, chars = measure(iops, mib_s, args)
        for n, (char, io, wall) in enumerate(chars):
            rows += rows_of(iops, mib_s, sweep if n == 0 else None, char, io, wall)
    print(header)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
