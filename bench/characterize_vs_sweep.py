#!/usr/bin/env python3
"""Does `iobench characterize` find what a full sweep finds, in a third of its time?

For each pair of caps, builds a capped volume (a loop device over a file of random data in
/dev/shm, throttled by a cgroup, as DESIGN.md describes), then runs the full matrix with
`iobench sweep` (5 block sizes x 8 queue depths) and the adaptive `iobench characterize`,
and prints both answers (IOPS limit, bandwidth limit, crossover block size), how far apart
they are, how far each is from the caps set, and the wall time of each.

    sudo .venv/bin/python bench/characterize_vs_sweep.py [--runtime 5] [--point-time 15]

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
PAIRS = [(5000, 200), (2000, 32)]  # (IOPS, MiB/s): crossovers near 41 KiB and 16 KiB
SWEEP = ["--bs", "4k,16k,64k,256k,1m", "--qd", "1,2,4,8,16,32,64,128"]
V1 = Path("/sys/fs/cgroup/blkio")


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", default="5", help="sweep: seconds per point (default 5)")
    ap.add_argument("--point-time", default="15", help="characterize: most seconds per point")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root: loop devices and cgroups", file=sys.stderr)
        return 2
    print(
        f"sweep: {SWEEP[1]} x QD {SWEEP[3]}, {args.runtime} s + 1 s ramp per point; "
        f"characterize: up to {args.point_time} s per point, ended at fio's steady state"
    )
    columns = ("sweep", "characterize", "apart", "vs cap (s/c)")
    header = f"{'caps':22} {'limit':10} " + "{:>14} {:>14} {:>7} {:>16}".format(*columns)
    rows: list[str] = []
    for iops, mib_s in PAIRS:
        stack: list[Any] = []
        try:
            dev, group = capped(256 * MiB, iops, mib_s, stack)
            with tempfile.TemporaryDirectory() as tmp:
                db = Path(tmp) / "bench.db"
                sweep, t_sweep = iobench(
                    group, db, "sweep", dev, *SWEEP, "--runtime", f"{args.runtime}s",
                    "--ramp", "1s",
                )  # fmt: skip
                char, t_char = iobench(
                    group, db, "characterize", dev, "--point-time", f"{args.point_time}s"
                )
        finally:
            for undo in reversed(stack):
                undo()
        a, b = limits_of(sweep), limits_of(char)
        caps = {"iops": iops, "bw_bytes": mib_s * MiB, "crossover_bs": mib_s * MiB / iops}
        name = f"{iops} IOPS, {mib_s} MiB/s"
        for key in ("iops", "bw_bytes", "crossover_bs"):
            va = a[key]["value"] if a[key] else None
            vb = b[key]["value"] if b[key] else None
            apart = f"{(vb / va - 1) * 100:+.1f}%" if va and vb else "-"
            vs = (
                f"{(va / caps[key] - 1) * 100:+.1f}/{(vb / caps[key] - 1) * 100:+.1f}%"
                if va and vb
                else "-"
            )
            rows.append(
                f"{name:22} {key:10} {fmt(key, va):>14} {fmt(key, vb):>14} {apart:>7} {vs:>16}"
            )
            name = ""
        points = len(sweep["results"])
        rows.append(
            f"{'':22} {'time':10} {t_sweep:>12.0f} s {t_char:>12.0f} s "
            f"{t_char / t_sweep:>6.0%}   ({points} vs {char['points']} points)"
        )
    print(header)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
