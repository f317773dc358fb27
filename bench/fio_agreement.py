#!/usr/bin/env python3
"""Does iobench measure what fio by hand measures?

Runs the same workloads through `iobench run --json` and through a job file written the way
a person would write it for fio, interleaved (iobench, fio, iobench, fio, ...) so drift hits
both alike, and prints the mean IOPS and p99 of each, their difference, and the run-to-run
noise (coefficient of variation) of each side. Agreement means the difference is within
that noise.

    .venv/bin/python bench/fio_agreement.py [DIR] [--repeat 3] [--runtime 5]

DIR (default: a temporary directory under the current one) gets a 256 MiB test file per
side, removed afterwards. Never run it while another fio load runs on the machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOADS = [
    ("randread-4k-qd1", "randread", "4k", 1, 1),
    ("randread-4k-qd32", "randread", "4k", 32, 1),
    ("randwrite-4k-qd32", "randwrite", "4k", 32, 1),
]
SIZE = "256M"


def by_hand(
    fio: str, d: Path, name: str, rw: str, bs: str, qd: int, jobs: int, runtime: int
) -> tuple[float, float]:
    target = d / "hand.dat"
    job = d / "hand.fio"
    job.write_text(
        f"[global]\nioengine=libaio\ndirect=1\ntime_based=1\nruntime={runtime}\nsize={SIZE}\n"
        f"filename={target}\n[{name}]\nrw={rw}\nbs={bs}\niodepth={qd}\nnumjobs={jobs}\n"
    )
    out = subprocess.run(
        [fio, "--output-format=json", str(job)], capture_output=True, text=True, check=True
    )
    doc = json.loads(out.stdout[out.stdout.index("{") :])
    section = doc["jobs"][0]["read" if "read" in rw else "write"]
    return section["iops"], section["clat_ns"]["percentile"]["99.000000"]


def via_iobench(
    iobench: str, d: Path, db: Path, name: str, rw: str, bs: str, qd: int, jobs: int, runtime: int
) -> tuple[float, float]:
    suite = d / "one.toml"
    suite.write_text(
        f'name = "agreement"\ndescription = "one workload"\n[[workload]]\nname = "{name}"\n'
        f'rw = "{rw}"\nbs = "{bs}"\niodepth = {qd}\nnumjobs = {jobs}\nruntime = "{runtime}s"\n'
        f'size = "{SIZE}"\n'
    )
    target = d / "iobench"
    target.mkdir(exist_ok=True)
    out = subprocess.run(
        [iobench, "--db", str(db), "run", str(target), "--suite", str(suite), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    r = json.loads(out.stdout)["results"][0]
    section = r["read" if "read" in rw else "write"]
    # fio's own p99 above is completion latency; compare like with like.
    return section["iops"], section["clat_ns"]["p99"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    args = ap.parse_args()
    fio = shutil.which("fio")
    iobench = str(Path(sys.executable).parent / "iobench")
    if fio is None:
        print("fio is not installed", file=sys.stderr)
        return 1
    d = Path(tempfile.mkdtemp(prefix="iobench-agreement-", dir=args.dir or "."))
    try:
        version = subprocess.run([fio, "--version"], capture_output=True, text=True).stdout
        print(f"{version.strip()}, {args.repeat} x {args.runtime} s per side, interleaved, in {d}")
        print(
            f"{'workload':<20} {'side':<8} {'IOPS mean':>10} {'CV':>6} {'p99 clat':>10}  difference"
        )
        for name, rw, bs, qd, jobs in WORKLOADS:
            sides: dict[str, list[tuple[float, float]]] = {"iobench": [], "fio": []}
            for _ in range(args.repeat):
                sides["iobench"].append(
                    via_iobench(iobench, d, d / "db.sqlite", name, rw, bs, qd, jobs, args.runtime)
                )
                sides["fio"].append(by_hand(fio, d, name, rw, bs, qd, jobs, args.runtime))
            means = {k: statistics.mean(i for i, _ in v) for k, v in sides.items()}
            for side, samples in sides.items():
                iops = [i for i, _ in samples]
                cv = statistics.stdev(iops) / means[side] * 100 if len(iops) > 1 else 0.0
                p99 = statistics.mean(p for _, p in samples) / 1000
                diff = ""
                if side == "fio":
                    diff = f"{(means['iobench'] / means['fio'] - 1) * 100:+.1f} % IOPS"
                print(
                    f"{name:<20} {side:<8} {means[side]:>10.0f} {cv:>5.1f}% {p99:>8.1f}µs  {diff}"
                )
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
