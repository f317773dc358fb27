"""Nothing outside the target, whoever else may write its directory (issue 22, point 2).

Someone who may write the target directory renames a symbolic link over iobench's test
file, or points a link the user named at another file or device, between two steps or
while fio runs. iobench holds each target open from its check on and fio reaches it
through that descriptor, so nothing else is ever written; a name that now leads elsewhere
stops the run (exit 3), and what the name leads to is left alone. These tests run the real
engine and the real fio, and do the swaps from an observer at chosen moments."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import MINI_SUITE, Cli
from iobench.engine import NullObserver, Outcome, RunRequest, Step, execute
from iobench.errors import TargetUnsafe
from iobench.fio.runner import LiveStats, find_fio
from iobench.records import RunRecord
from iobench.store import Store
from iobench.suites import load_suite_file
from iobench.targets import Reach
from scratch import Scratch, sha256_of

MiB = 1 << 20

WRITES = """\
name = "writes"
[defaults]
runtime = "1s"
size = "4M"
iodepth = 4
numjobs = 1
bs = "4k"
[[workload]]
name = "w1"
rw = "randwrite"
[[workload]]
name = "w2"
rw = "randwrite"
[[workload]]
name = "w3"
rw = "write"
"""
# The same at 50 writes a second for 2 s: a change made at w1's first live report (about
# 1 s in) falls mid-step, and a file truncated then is not grown back by fio's own writes
# (at full speed, a random write past the new end extends it within microseconds, and one
# to the last block makes it whole again before iobench looks).
SLOW_WRITES = WRITES.replace('runtime = "1s"', 'runtime = "2s"\nrate_iops = 50')


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class At(NullObserver):
    """Does ``action`` when the step named ``name`` starts (``live``: once fio of that step
    has reported live figures, i.e. while it runs)."""

    def __init__(self, name: str, action: Callable[[], None], *, live: bool = False) -> None:
        self.name, self.action, self.live = name, action, live
        self.done = threading.Event()

    def started(self, step: Step) -> None:
        if not self.live and step.name == self.name and not self.done.is_set():
            self.done.set()
            self.action()

    def progress(self, step: Step, stats: LiveStats) -> None:
        if self.live and step.name == self.name and not self.done.is_set() and stats.io_bytes:
            self.done.set()
            self.action()


def _run(
    tmp_path: Path, target: Path, suite: str, observer: At, *, destructive: bool = False
) -> tuple[Outcome, RunRecord]:
    path = tmp_path / "suite.toml"
    path.write_text(suite)
    request = RunRequest(
        targets=(str(target),), suite=load_suite_file(str(path)), destructive=destructive
    )
    with Store.open(tmp_path / "db.sqlite") as store:
        outcome = execute(request, store, find_fio(), observer)
        run = store.get_run(outcome.run_id)
    assert observer.done.is_set(), "the swap happened"
    return outcome, run


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A directory anyone may write, without the sticky bit, and a root-only victim file
    elsewhere."""
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    victim = tmp_path / "victim"
    victim.write_bytes(os.urandom(16 * MiB))
    victim.chmod(0o600)
    return d


def _test_file(d: Path) -> Path:
    (found,) = [p for p in d.iterdir() if p.name.startswith("iobench-") and p.suffix == ".dat"]
    return found


def _swap_in_link(d: Path, to: Path) -> Callable[[], None]:
    """What the attacker does: a link to ``to`` renamed over iobench's test file."""

    def swap() -> None:
        test_file = _test_file(d)
        link = d / "planted"
        link.symlink_to(to)
        link.rename(test_file)

    return swap


@pytest.mark.fio
@pytest.mark.parametrize(
    ("moment", "live"),
    [("lay out test file", False), ("lay out test file", True), ("w1", False), ("w1", True),
     ("w2", False), ("w3", True)],
)  # fmt: skip
def test_a_link_renamed_over_the_test_file_writes_nothing_else(
    tmp_path: Path, shared: Path, moment: str, live: bool
) -> None:
    victim = tmp_path / "victim"
    before = _digest(victim)
    outcome, _ = _run(tmp_path, shared, WRITES, At(moment, _swap_in_link(shared, victim),
                                                     live=live))  # fmt: skip
    assert _digest(victim) == before, "not a byte of the victim changed"
    assert outcome.status == "failed"
    error = outcome.error
    assert isinstance(error, TargetUnsafe) and "was replaced during the run" in error.message
    assert int(error.exit_code) == 3
    # What the name leads to now is the attacker's: left as it is, and nothing of iobench's.
    assert [p.name for p in shared.iterdir()] == [_test_file(shared).name]
    assert _test_file(shared).is_symlink()


@pytest.mark.fio
@pytest.mark.parametrize(
    "how",
    ["hard link", "removed", "renamed away", "other file", "fifo", "device node", "bind mount"],
)
def test_other_swaps_of_the_test_file_stop_the_run_and_touch_nothing(
    tmp_path: Path, shared: Path, how: str, request: pytest.FixtureRequest
) -> None:
    if how in ("device node", "bind mount") and os.geteuid() != 0:
        pytest.skip("needs root")
    victim = tmp_path / "victim"
    before = _digest(victim)
    device = request.getfixturevalue("scratch").loop() if how == "device node" else None
    device_before = sha256_of(device) if device else None
    away = tmp_path / "away"
    mounted: list[Path] = []

    def swap() -> None:
        test_file = _test_file(shared)
        if how == "hard link":  # (protected_hardlinks may refuse another user; root may)
            os.link(victim, shared / "planted")
            (shared / "planted").rename(test_file)
        elif how == "fifo":
            os.mkfifo(shared / "planted")
            (shared / "planted").rename(test_file)
        elif how == "device node":  # a node of another (loop) device
            assert device is not None
            os.mknod(shared / "planted", stat.S_IFBLK | 0o600, Path(device).stat().st_rdev)
            (shared / "planted").rename(test_file)
        elif how == "bind mount":  # the victim mounted over the test file's name
            subprocess.run(["mount", "--bind", str(victim), str(test_file)], check=True)
            mounted.append(test_file)
        elif how == "removed":
            test_file.unlink()
        elif how == "renamed away":
            test_file.rename(away)
        else:
            (shared / "planted").write_bytes(b"mine")
            (shared / "planted").rename(test_file)

    try:
        outcome, _ = _run(tmp_path, shared, WRITES, At("w2", swap))
    finally:
        for path in mounted:
            subprocess.run(["umount", str(path)], check=True)
    assert _digest(victim) == before
    if device:
        assert sha256_of(device) == device_before
    assert outcome.status == "failed"
    assert "was replaced during the run" in str(outcome.error)
    if how == "renamed away":  # iobench's own file, wherever it went: its data freed
        assert away.stat().st_size == 0
    if how == "other file":
        assert _test_file(shared).read_bytes() == b"mine"


@pytest.mark.fio
def test_a_users_file_swapped_between_steps_stops_the_run(tmp_path: Path) -> None:
    """An existing file named through a link that someone repoints: the file checked is
    written (--destructive), the one the link leads to afterwards never."""
    mine = tmp_path / "scratch.dat"
    mine.write_bytes(b"\0" * (4 * MiB))
    victim = tmp_path / "victim"
    victim.write_bytes(os.urandom(4 * MiB))
    before = _digest(victim)
    link = tmp_path / "link"
    link.symlink_to(mine)

    def repoint() -> None:
        (tmp_path / "new").symlink_to(victim)
        (tmp_path / "new").rename(link)

    outcome, run = _run(tmp_path, link, WRITES, At("w2", repoint), destructive=True)
    assert _digest(victim) == before
    assert outcome.status == "failed"
    assert "was replaced during the run" in str(outcome.error)
    assert [r.workload for r in run.results] == ["w1"]


@pytest.mark.fio
@pytest.mark.root
def test_a_device_link_repointed_between_steps_writes_nothing_to_the_other(
    tmp_path: Path, scratch: Scratch
) -> None:
    first, other = scratch.loop(), scratch.loop()
    before = sha256_of(other)
    link = tmp_path / "disk"
    link.symlink_to(first)

    def repoint() -> None:
        (tmp_path / "new").symlink_to(other)
        (tmp_path / "new").rename(link)

    outcome, _ = _run(tmp_path, link, WRITES, At("w2", repoint), destructive=True)
    assert sha256_of(other) == before
    assert outcome.status == "failed"
    assert "was replaced during the run" in str(outcome.error)


@pytest.mark.fio
def test_a_directory_swapped_after_its_check_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    """The directory iobench checked is renamed and a link to another put in its place
    between the plan and the run: nothing is created in either."""
    from iobench.engine import check

    checked = tmp_path / "vol"
    checked.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "suite.toml").write_text(MINI_SUITE)
    request = RunRequest(
        targets=(str(checked),), suite=load_suite_file(str(tmp_path / "suite.toml"))
    )
    plan = check(request, find_fio())
    checked.rename(tmp_path / "moved")
    checked.symlink_to(elsewhere)
    with Store.open(tmp_path / "db.sqlite") as store:
        outcome = execute(request, store, find_fio(), checked=plan)
    assert outcome.status == "failed"
    assert isinstance(outcome.error, TargetUnsafe)
    assert "changed after iobench checked it" in outcome.error.message
    assert list(elsewhere.iterdir()) == [] and list((tmp_path / "moved").iterdir()) == []


def test_an_unchanged_run_in_a_shared_directory_completes(cli: Cli, shared: Path) -> None:
    """The guard does not get in the way: a run where nobody swaps anything completes,
    and says the directory is shared."""
    code, out, err = cli("run", str(shared), "--runtime", "1s", "--size", "4M", "--json")
    assert code == 0, err
    doc = __import__("json").loads(out)
    found = [w for w in doc["warnings"] if w["id"] == "shared-directory"]
    assert len(found) == 1 and "everyone (mode 0777, no sticky bit)" in found[0]["message"]
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize(
    ("mode", "owner", "said"),
    [
        (0o777, 0, "everyone (mode 0777, no sticky bit)"),
        (0o1777, 0, None),
        (0o775, 0, "the group"),
        (0o3775, 0, None),
        (0o755, 0, None),
        (0o700, 65534, "user nobody (its owner)"),
        (0o1777, 65534, "user nobody (its owner)"),
    ],
)
def test_doctor_says_who_else_may_write_the_target_directory(
    cli: Cli, tmp_path: Path, mode: int, owner: int, said: str | None
) -> None:
    if owner and os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    d = tmp_path / "vol"
    d.mkdir()
    d.chmod(mode)
    os.chown(d, owner, -1)
    code, out, err = cli("doctor", str(d), "--json")
    assert code == 0, err
    found = [w for w in __import__("json").loads(out)["warnings"] if w["id"] == "shared-directory"]
    if said is None:
        assert found == []
    else:
        assert len(found) == 1 and said in found[0]["message"]
        assert "chmod +t" in found[0]["fix"]


# -- a file that shrinks: fio would re-create it in the private directory ----------------------


def _owned_by_nobody(path: Path) -> None:
    """The file belongs to another user, who may truncate it (as root; else it is ours)."""
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)


@pytest.mark.fio
@pytest.mark.parametrize(("moment", "live"), [("w2", False), ("w3", False), ("w1", True)])
def test_a_users_file_truncated_during_the_run_stops_it_and_nothing_is_made_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str, live: bool
) -> None:
    """The owner of a file given with --destructive truncates it during the run. fio, finding
    it smaller than the test area, used to remove the link it reaches it by and write a file
    of the test area's size in iobench's private directory (TMPDIR, as root), and the run
    blamed iobench's sizing. Now the size is checked before each step (exit 3), and fio may
    create nothing: no regular file ever appears in the private directory."""
    mine = tmp_path / "scratch.dat"
    mine.write_bytes(b"\0" * (4 * MiB))
    _owned_by_nobody(mine)
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr("tempfile.tempdir", None)
    made: list[str] = []
    stop = threading.Event()

    def watch() -> None:  # what fio makes in the private directory, as it makes it
        while not stop.is_set():
            for d in private.glob("iobench-*"):
                link = d / "target"
                if link.exists() and not link.is_symlink():
                    made.append(f"{link}: {link.stat().st_size} bytes")
            stop.wait(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        suite = SLOW_WRITES if live else WRITES
        outcome, run = _run(tmp_path, mine, suite, At(moment, lambda: os.truncate(mine, 4096),
                                                       live=live), destructive=True)  # fmt: skip
    finally:
        stop.set()
        watcher.join()
    assert made == []
    assert outcome.status == "failed"
    error = outcome.error
    assert isinstance(error, TargetUnsafe), error
    assert f"{mine} shrank during the run, from {4 * MiB} to " in error.message
    assert "bug" not in error.message + str(error.hint)
    assert int(error.exit_code) == 3
    assert all(r.status == "ok" for r in run.results)
    assert "allow_file_create=0" in run.results[0].job_file.splitlines()


@pytest.mark.fio
def test_a_users_file_truncated_and_grown_again_during_a_step_still_stops_the_run(
    tmp_path: Path,
) -> None:
    """Truncated while a writing step runs, the file grows back (here by its owner; fio's
    own writes past its end extend it too): by the next step's check its size is whole
    again. The size looked at at each live report catches it all the same (before, such a
    run completed; the test above, at fio's full speed, failed that way now and then)."""
    mine = tmp_path / "scratch.dat"
    mine.write_bytes(b"\0" * (4 * MiB))
    _owned_by_nobody(mine)

    def truncate_then_grow_again() -> None:
        os.truncate(mine, 4096)
        threading.Timer(0.05, os.truncate, (mine, 4 * MiB)).start()

    outcome, run = _run(
        tmp_path, mine, SLOW_WRITES, At("w1", truncate_then_grow_again, live=True),
        destructive=True,
    )  # fmt: skip
    assert mine.stat().st_size == 4 * MiB  # whole again before the next check
    assert outcome.status == "failed"
    error = outcome.error
    assert isinstance(error, TargetUnsafe), error
    assert f"{mine} shrank during the run, from {4 * MiB} to " in error.message
    assert [r.workload for r in run.results] == ["w1"]  # measured, stored; nothing after


@pytest.mark.parametrize("truncated_to", [0, 4096])
def test_the_smallest_size_seen_while_fio_ran_is_the_one_checked(
    tmp_path: Path, truncated_to: int
) -> None:
    """Each live report's glance keeps the smallest size seen, down to an empty file: the
    check after the step names it even when the file is whole again."""
    from types import SimpleNamespace

    from iobench.engine.held import HeldTarget

    mine = tmp_path / "scratch.dat"
    mine.write_bytes(b"\0" * (64 * 1024))
    prepared = SimpleNamespace(
        size_limit=64 * 1024, layout_bytes=None, filename=str(mine),
        target=SimpleNamespace(spec=str(mine)),
    )  # fmt: skip
    fd = os.open(mine, os.O_RDONLY)
    try:
        held = HeldTarget(prepared, fd)  # type: ignore[arg-type]
        held.glance()
        held.check()  # whole: nothing to say
        os.truncate(mine, truncated_to)
        held.glance()
        os.truncate(mine, 32 * 1024)
        held.glance()
        os.truncate(mine, 64 * 1024)
        held.glance()
        with pytest.raises(TargetUnsafe) as e:
            held.check()
        assert f"from {64 * 1024} to {truncated_to} bytes" in e.value.message
    finally:
        os.close(fd)


@pytest.mark.fio
@pytest.mark.parametrize("rw", ["randwrite", "randread", "write"])
def test_fio_given_a_target_smaller_than_the_test_area_makes_no_file_of_its_own(
    tmp_path: Path, rw: str
) -> None:
    """The moment no check can cover: the target shrinks after iobench looked at it and
    before fio does. fio fails, creating nothing in the private directory, and the message
    says what happened (not "a bug in iobench's sizing")."""
    from iobench.errors import FioFailed
    from iobench.fio.jobfile import build_jobfile
    from iobench.fio.runner import Held, run_fio
    from iobench.model import Workload

    small = tmp_path / "small.dat"
    small.write_bytes(b"x" * 4096)
    work = tmp_path / "work"
    work.mkdir()
    seen: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            link = work / "target"
            try:
                if not link.is_symlink():
                    seen.append(f"a file of {link.stat().st_size} bytes")
            except FileNotFoundError:  # not there, or gone between the two looks
                pass
            stop.wait(0.002)

    w = Workload("w", rw, 4096, 1, 1, ioengine="psync", runtime_s=1)
    fd = os.open(small, os.O_RDWR)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with pytest.raises(FioFailed) as e:
            run_fio(find_fio(), build_jobfile(w, Reach.file(str(small)), 8 * MiB), work,
                    timeout_s=30,
                    held=Held(fd))  # fmt: skip
    finally:
        stop.set()
        watcher.join()
        os.close(fd)
    assert seen == []
    assert "smaller than the test area" in e.value.message
    assert "nothing was written" in e.value.message
    assert "bug" not in str(e.value.hint)
    assert small.read_bytes() == b"x" * 4096
    assert not (work / "target").exists()
