#!/usr/bin/env python3
"""What does a run on many clients cost the controller?

Makes 16 test hosts the way the tests do (tests/hosts.py: network namespaces on a bridge,
each running a real ``fio --server`` bound to its own address), then, for 1, 2, 4, 8 and 16
of them, runs ``iobench run DIR --clients ...`` with one 3 s psync random read on a tmpfs
directory all the namespaces share, and prints per client count: the wall time of the
iobench process, the CPU time of iobench and of every process it started (its launchers
and fio clients: ``os.wait4``'s rusage, which includes the waited-for descendants), that
CPU split into iobench's own and its children's, the fixed overhead (wall minus the
workload's runtime), and the CPU the fio servers used meanwhile (on the same machine here:
each server's and its ended processes' times in /proc). The slope of the CPU over the
clients is what each client costs.

    sudo flock /tmp/iobench-fio.lock .venv/bin/python bench/clients_scaling.py \\
        [--counts 1,2,4,8,16] [--repeat 2] [--runtime 3] [--profile 16]

``--profile N`` runs the N-client count once more under cProfile and prints iobench's own
hottest functions (cumulative), to see where the controller's time goes.

Needs root (namespaces, veth pairs). The fio servers (the hosts' CPU, not the
controller's) run on the same machine, so the wall time includes theirs. Everything it
creates (namespaces, links, servers, the shared directory, the database) is removed
afterwards, also on Ctrl-C. Never run it while another fio load runs on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

SUITE = """\
name = "scaling"
description = "one psync random read, for the controller's cost per client"
[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
ioengine = "psync"
iodepth = 1
numjobs = 1
direct = false
size = "8M"
runtime = "{runtime}s"
ramp = "0s"
"""

# Runs iobench in this process and leaves its own and its children's rusage in a file, so
# the CPU can be split into iobench's and that of the processes it started.
SHIM = """\
import atexit, json, resource, sys
usage = sys.argv[1]
def said():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(usage, "w") as f:
        json.dump({"own": own.ru_utime + own.ru_stime,
                   "children": kids.ru_utime + kids.ru_stime,
                   "own_rss_kib": own.ru_maxrss, "children_rss_kib": kids.ru_maxrss}, f)
atexit.register(said)
sys.argv = ["iobench", *sys.argv[2:]]
if sys.argv[1] == "--profile":  # every thread profiled (the clients' work runs in threads)
    import cProfile, pstats, threading
    out = sys.argv.pop(2)
    sys.argv.pop(1)
    profiles = [cProfile.Profile()]
    plain_run = threading.Thread.run
    def profiled_run(self):
        profile = cProfile.Profile()
        profiles.append(profile)
        profile.runcall(plain_run, self)
    threading.Thread.run = profiled_run
    from iobench.cli import run_cli
    try:
        code = profiles[0].runcall(run_cli, sys.argv[1:])
    finally:
        stats = pstats.Stats(profiles[0])
        for profile in profiles[1:]:
            stats.add(profile)
        stats.dump_stats(out)
    sys.exit(code)
from iobench.__main__ import main
main()
"""


def server_cpu_s(pids: list[int]) -> float:
    """The CPU seconds the fio servers ``pids`` and every process of theirs that has ended
    used so far (utime, stime and their reaped children's: a server forks a process for
    each connection, which forks the job's; each waits for its own), once none of them has
    a connection process left (a server reaps one up to a second after it ended)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(
        Path(f"/proc/{pid}/task/{pid}/children").read_text().split() for pid in pids
    ):
        time.sleep(0.05)
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / ticks


def run_once(
    hosts: list[str],
    shared: Path,
    suite: Path,
    tmp: Path,
    profile: Path | None = None,
    servers: list[int] | None = None,
) -> dict[str, Any]:
    """One ``iobench run`` on ``hosts``: its wall, CPU (own and children's), the CPU of
    the fio ``servers`` (their pids) and JSON."""
    servers_before = server_cpu_s(servers or [])
    db = tmp / f"bench-{len(hosts)}-{time.monotonic_ns()}.db"
    usage = tmp / "usage.json"
    argv = [sys.executable, "-c", SHIM, str(usage)]
    if profile is not None:
        argv += ["--profile", str(profile)]
    argv += ["--db", str(db), "run", str(shared), "--suite", str(suite)]
    argv += ["--clients", ",".join(hosts), "--json"]
    out_path, err_path = tmp / "out.json", tmp / "err.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(
            f"iobench exited {proc.returncode} on {len(hosts)} clients: {err_path.read_text()}"
        )
    servers_s = server_cpu_s(servers or []) - servers_before
    doc = json.loads(out_path.read_text())
    split = json.loads(usage.read_text())
    db.unlink(missing_ok=True)
    return {
        "clients": len(hosts),
        "wall_s": wall,
        "cpu_s": rusage.ru_utime + rusage.ru_stime,
        "own_s": split["own"],
        "children_s": split["children"],
        "servers_s": servers_s,
        "own_rss_kib": split["own_rss_kib"],
        "children_rss_kib": split["children_rss_kib"],
        "skew_ms": max(s["start_skew_ms"] or 0 for s in doc["clients"]["steps"]),
        "ok": sum(1 for r in doc["results"] if r["status"] == "ok" and r["client"] != "all"),
    }


def slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of ys over xs."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def print_profile(path: Path) -> None:
    import pstats

    stats = pstats.Stats(str(path))
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(20)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="1,2,4,8,16", help="client counts (default 1,2,4,8,16)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per count; the median is shown")
    ap.add_argument("--runtime", type=int, default=3, help="the workload's seconds (default 3)")
    ap.add_argument("--profile", type=int, default=0, help="profile iobench at this count")
    ap.add_argument("--json", action="store_true", help="print every run as JSON as well")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root: network namespaces and veth pairs", file=sys.stderr)
        return 2
    from hosts import FioHosts, why_no_netns

    why = why_no_netns()
    if why:
        print(f"cannot make test hosts here: {why}", file=sys.stderr)
        return 2
    counts = [int(c) for c in args.counts.split(",")]
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="iobench-bench-clients-"))
        stack.callback(shutil.rmtree, tmp, ignore_errors=True)
        shared = Path(tempfile.mkdtemp(prefix="iobench-bench-clients-", dir="/dev/shm"))
        stack.callback(shutil.rmtree, shared, ignore_errors=True)
        suite = tmp / "scaling.toml"
        suite.write_text(SUITE.format(runtime=args.runtime))
        hosts = FioHosts(tmp, max([*counts, args.profile]), stack)
        names = [h.name for h in hosts.hosts]
        run_once(names[:1], shared, suite, tmp)  # warm the caches (pages of fio, Python)
        for n in counts:
            pids = [h.server.pid for h in hosts.hosts[:n] if h.server is not None]
            runs = [run_once(names[:n], shared, suite, tmp, servers=pids)
                    for _ in range(args.repeat)]  # fmt: skip
            for r in runs:
                if r["ok"] != n:
                    raise RuntimeError(f"{n} clients: only {r['ok']} results are ok")
            rows.append({k: statistics.median(r[k] for r in runs) for k in runs[0]})
            if args.json:
                print(json.dumps(runs))
        if args.profile:
            prof = tmp / "profile.out"
            r = run_once(names[: args.profile], shared, suite, tmp, profile=prof)
            print(
                f"profiled: {args.profile} clients, wall {r['wall_s']:.1f} s, iobench "
                f"{r['own_s']:.2f} s CPU, children {r['children_s']:.2f} s CPU"
            )
            print_profile(prof)
        left = sorted(p.name for p in shared.iterdir())
        if left:
            raise RuntimeError(f"test files left in {shared}: {left}")
    print(f"one {args.runtime} s psync random read on tmpfs, namespace hosts with fio --server; "
          f"median of {args.repeat} runs per count")  # fmt: skip
    print(f"{'clients':>7} {'wall':>7} {'CPU':>7} {'iobench':>8} {'children':>9} "
          f"{'CPU/client':>11} {'fixed':>6} {'skew':>7} {'RSS':>7} {'child RSS':>9} "
          f"{'servers':>8}")  # fmt: skip
    for r in rows:
        print(
            f"{r['clients']:>7.0f} {r['wall_s']:>6.1f}s {r['cpu_s']:>6.2f}s {r['own_s']:>7.2f}s "
            f"{r['children_s']:>8.2f}s {r['cpu_s'] / r['clients']:>10.3f}s "
            f"{r['wall_s'] - args.runtime:>5.1f}s {r['skew_ms']:>5.0f}ms "
            f"{r['own_rss_kib'] / 1024:>4.0f}MiB {r['children_rss_kib'] / 1024:>6.0f}MiB "
            f"{r['servers_s']:>7.2f}s"
        )
    if len(rows) > 1:
        xs = [r["clients"] for r in rows]
        print(
            f"per added client: CPU {slope(xs, [r['cpu_s'] for r in rows]):.3f} s "
            f"(iobench {slope(xs, [r['own_s'] for r in rows]):.3f} s, children "
            f"{slope(xs, [r['children_s'] for r in rows]):.3f} s), "
            f"wall {slope(xs, [r['wall_s'] for r in rows]):.3f} s; the fio servers' CPU "
            f"{slope(xs, [r['servers_s'] for r in rows]):.3f} s (on this machine's "
            f"{os.cpu_count()} CPUs too)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
