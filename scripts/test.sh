#!/usr/bin/env bash
# Set up everything (scripts/setup.sh --dev), then run lint, type checks and the whole test
# suite, in three groups, one after the other:
#   1. every test that shares no device and no timing with another, in parallel
#      (pytest-xdist, IOBENCH_TEST_WORKERS processes, 6 by default: on 2 CPUs four left
#      them idle for 70 of 364 s, waiting on fio's runtimes and servers' replies);
#   2. the measuring tests whose figures a throttle sets (marker `paced`: fio waits on a
#      cgroup cap and needs little CPU), IOBENCH_PACED_LANES at a time (2 by default), with
#      nothing else beside them;
#   3. the other timing-sensitive tests (marker `serial`: they check measured figures, and on
#      a 2-CPU machine any other load distorts them), one at a time with nothing beside them.
# At the end, the 15 slowest tests of all three. Extra arguments go to every pytest run (a
# group none of whose tests they select is skipped). Run as root: the block-device, cgroup
# and network-namespace tests need it (they skip themselves, saying why, without).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# pytest rewrites the asserts of every test module in every process it starts (about 9 s
# of CPU each): let it keep the rewritten modules, under .venv, for the next process.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$PWD/.venv/pycache"
# While mypy runs (one CPU, about 10 s from a clean clone), fill those caches once on the
# other CPU, so that the test processes started together do not each compile everything.
.venv/bin/mypy &
mypy_pid=$!
.venv/bin/python -m pytest --collect-only -q -p no:cacheprovider >/dev/null || true
.venv/bin/python -c "import plotly.graph_objects, iobench.report.html" || true
wait "$mypy_pid"
reports="$(mktemp -d /tmp/iobench-test-reports.XXXXXX)"
trap 'rm -rf "$reports"' EXIT

statuses=()
run_group() {
    local name="$1"
    shift
    echo "== test group: $name"
    local code=0
    # -rsx: every skipped or expected-to-fail test is named with its reason at the end
    .venv/bin/python -m pytest -rsx --junitxml "$reports/$name.xml" "$@" || code=$?
    # 5: no test of this group was selected by the extra arguments
    [ "$code" = 5 ] || statuses+=("$code")
}
run_group parallel -m "not serial and not paced" -n "${IOBENCH_TEST_WORKERS:-6}" \
    --dist worksteal "$@"
run_group paced -m paced -n "${IOBENCH_PACED_LANES:-2}" --dist worksteal "$@"
run_group serial -m serial -p no:xdist "$@"
.venv/bin/python scripts/slowest.py 15 "$reports"/*.xml
[ "${#statuses[@]}" -gt 0 ] || { echo "test: no test selected" >&2; exit 5; }
for code in "${statuses[@]}"; do
    [ "$code" = 0 ] || exit "$code"
done
