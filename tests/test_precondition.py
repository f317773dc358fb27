"""`iobench precondition` and `run --precondition` (issue 26, point 1): the purge (a discard
on a device, holes punched in a file, nothing for a new test file), the sequential fill,
what is stored with the run and shown, and what is refused. Real loop devices, real fio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.report.precondition import precondition_lines
from iobench.targets.purge import Purge, purge
from scratch import MiB, Scratch, run_tool, sha256_of, tool

AREA = 8 * MiB


def _discarded_sectors(dev: str) -> int:
    """The sectors the kernel discarded on ``dev`` (its stat's 14th field)."""
    fields = Path(f"/sys/class/block/{Path(dev).name}/stat").read_text().split()
    return int(fields[13])


def _fill_random(path: str, size: int) -> None:
    with open(path, "r+b" if Path(path).exists() else "wb") as f:
        f.write(os.urandom(size))
        f.flush()
        os.fsync(f.fileno())


def _first(path: str, size: int) -> bytes:
    with open(path, "rb") as f:
        return f.read(size)


def _precondition(cli: Cli, *args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = cli("precondition", *args, "--json")
    return code, (json.loads(out) if out else {}), err


def _stored_runs(cli: Cli) -> list[dict[str, Any]]:
    code, out, _ = cli("list", "--json")
    assert code == 0
    runs: list[dict[str, Any]] = json.loads(out)["runs"]
    return runs


@pytest.fixture
def ramfs(scratch: Scratch, tmp_path: Path) -> Path:
    """A ramfs mount: a loop device over one of its files takes no discards (ramfs cannot
    punch holes), without changing any device's settings."""
    where = tmp_path / "ramfs"
    where.mkdir()
    run_tool("mount", "-t", "ramfs", "ramfs", str(where))
    scratch.stack.callback(
        subprocess.run, [tool("umount"), str(where)], capture_output=True, timeout=60, check=False
    )
    return where


# -- the purge itself, on real storage (no fio) -----------------------------------------------


@pytest.mark.root
def test_a_discard_makes_a_loop_device_read_zeros_over_the_area_only(scratch: Scratch) -> None:
    dev = scratch.loop(scratch.image(16 * MiB))
    _fill_random(dev, 16 * MiB)
    after_area = _first(dev, 16 * MiB)[AREA:]
    fd = os.open(dev, os.O_WRONLY)
    try:
        done = purge(Purge("discard", "said"), fd, AREA + 1000)  # cut to whole blocks
    finally:
        os.close(fd)
    assert (done.method, done.bytes, done.note) == ("discard", AREA, "said")
    data = _first(dev, 16 * MiB)
    assert data[:AREA] == bytes(AREA), "the discarded area reads zeros"
    assert data[AREA:] == after_area, "nothing past the area is touched"


@pytest.mark.parametrize("fs", ["tmp_path", "/dev/shm"])
def test_punching_holes_frees_a_file_s_blocks_and_keeps_its_size(tmp_path: Path, fs: str) -> None:
    where = tmp_path if fs == "tmp_path" else Path(fs)
    path = where / f"iobench-test-punch-{os.getpid()}.dat"
    try:
        _fill_random(str(path), 12 * MiB)
        allocated = path.stat().st_blocks * 512
        assert allocated >= 12 * MiB
        fd = os.open(path, os.O_WRONLY)
        try:
            done = purge(Purge("punch-hole", ""), fd, AREA)
        finally:
            os.close(fd)
        assert (done.method, done.bytes) == ("punch-hole", AREA)
        assert path.stat().st_size == 12 * MiB
        assert path.stat().st_blocks * 512 <= allocated - AREA
        assert _first(str(path), AREA) == bytes(AREA)
    finally:
        path.unlink(missing_ok=True)


def test_a_target_that_refuses_the_purge_is_said_not_purged(tmp_path: Path) -> None:
    path = tmp_path / "plain.dat"
    _fill_random(str(path), 4 * MiB)
    fd = os.open(path, os.O_WRONLY)
    try:
        done = purge(Purge("discard", "said"), fd, 4 * MiB)  # a file: BLKDISCARD is ENOTTY
    finally:
        os.close(fd)
    assert done.method == "none" and done.bytes == 0
    assert done.note.startswith("no purge: discard was refused (")
    assert _first(str(path), 4 * MiB) != bytes(4 * MiB)


# -- iobench precondition on a device ------------------------------------------------------


@pytest.mark.root
def test_precondition_discards_then_fills_a_loop_device(
    cli: Cli, scratch: Scratch, real_fio: str
) -> None:
    dev = scratch.loop(scratch.image(16 * MiB))
    _fill_random(dev, 16 * MiB)
    before = _first(dev, 16 * MiB)
    discarded = _discarded_sectors(dev)
    code, doc, err = _precondition(cli, dev, "--destructive", "--size", "8M")
    assert code == 0, err
    assert doc["suite"] == "precondition" and doc["status"] == "complete"
    assert doc["results"] == [] and doc["warnings"] == []
    (entry,) = doc["precondition"]["targets"]
    assert entry["target"] == dev and entry["area_bytes"] == AREA
    assert entry["purge"]["method"] == "discard" and entry["purge"]["bytes"] == AREA
    assert "secure erase" in entry["purge"]["note"]
    assert _discarded_sectors(dev) - discarded >= AREA // 512, "the kernel saw the discard"
    fill = entry["fill"]
    assert (fill["bs"], fill["passes"], fill["iodepth"]) == (128 * 1024, 2, 32)
    assert fill["bytes"] == 2 * AREA and fill["bw_bytes"] > 0 and fill["fio_rc"] == 0
    assert "rw=write" in fill["job_file"] and "loops=2" in fill["job_file"]
    after = _first(dev, 16 * MiB)
    assert after[:AREA] != bytes(AREA), "the fill wrote the area after the discard"
    assert after[:AREA] != before[:AREA]
    assert after[AREA:] == before[AREA:], "nothing past --size is touched"
    assert "[1/2] purge (discard) on " in err and "discarded 8 MiB in" in err
    assert "[2/2] fill (2 passes of sequential 128 KiB writes) on " in err


@pytest.mark.root
def test_precondition_shows_what_it_did_and_show_says_it_again(
    cli: Cli, scratch: Scratch, real_fio: str
) -> None:
    dev = scratch.loop(scratch.image(8 * MiB))
    code, out, err = cli("precondition", dev, "--destructive", "--passes", "1", "--bs", "64k")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("preconditioned"))
    assert line.startswith("preconditioned: discard of 8 MiB (")
    assert "), then 1 x 8 MiB sequential 64 KiB writes in " in line and line.endswith("/s)")
    assert "no workload finished" not in out
    code, shown, _ = cli("show", "latest")
    assert code == 0 and line in shown.splitlines()
    code, shown_json, _ = cli("show", "latest", "--json")
    fill = json.loads(shown_json)["precondition"]["targets"][0]["fill"]
    assert (fill["passes"], fill["bs"], fill["bytes"]) == (1, 64 * 1024, 8 * MiB)


@pytest.mark.root
def test_a_partition_is_discarded_through_its_disk_and_its_neighbour_is_untouched(
    cli: Cli, scratch: Scratch, real_fio: str
) -> None:
    dev = scratch.loop(scratch.image(48 * MiB))
    p1, p2 = scratch.partition(dev)
    _fill_random(p1, 4 * MiB)
    _fill_random(p2, 4 * MiB)
    neighbour = sha256_of(p2)
    discarded = _discarded_sectors(p1)
    code, doc, err = _precondition(cli, p1, "--destructive", "--size", "4M")
    assert code == 0, err
    assert doc["precondition"]["targets"][0]["purge"]["method"] == "discard"
    assert _discarded_sectors(p1) - discarded >= 4 * MiB // 512
    assert sha256_of(p2) == neighbour


@pytest.mark.root
def test_a_device_without_discard_is_filled_and_says_why_it_was_not_purged(
    cli: Cli, scratch: Scratch, ramfs: Path, real_fio: str
) -> None:
    with open(ramfs / "disk.img", "wb") as f:
        f.truncate(8 * MiB)
    dev = scratch.loop(ramfs / "disk.img")
    name = Path(dev).name
    assert Path(f"/sys/block/{name}/queue/discard_max_bytes").read_text().strip() == "0"
    code, out, err = cli("doctor", dev, "--destructive", "--precondition", "--suite", "quick")
    assert code == 0, err
    assert "purge (" not in out, "no purge step"
    assert f"no purge: {dev} does not support discard" in out
    code, doc, err = _precondition(cli, dev, "--destructive")
    assert code == 0, err
    entry = doc["precondition"]["targets"][0]
    assert entry["purge"]["method"] == "none" and entry["purge"]["bytes"] == 0
    assert entry["fill"]["bytes"] == 16 * MiB
    assert "[1/1] fill" in err and "purge" not in err.split("[1/1]")[0]
    _, out, _ = cli("show", "latest")
    assert f"preconditioned: no purge: {dev} does not support discard, then 2 x 8 MiB" in out


@pytest.mark.root
def test_no_purge_fills_only(cli: Cli, scratch: Scratch, real_fio: str) -> None:
    dev = scratch.loop(scratch.image(8 * MiB))
    discarded = _discarded_sectors(dev)
    code, doc, err = _precondition(cli, dev, "--destructive", "--no-purge", "--passes", "1")
    assert code == 0, err
    entry = doc["precondition"]["targets"][0]
    assert entry["purge"] == {
        "method": "none", "bytes": 0, "seconds": 0.0, "note": "not purged (--no-purge)"
    }  # fmt: skip
    assert doc["precondition"]["purge"] is False
    assert _discarded_sectors(dev) == discarded


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.root
def test_a_device_needs_destructive_and_stays_as_it_was(cli: Cli, scratch: Scratch) -> None:
    dev = scratch.loop(scratch.image(8 * MiB))
    _fill_random(dev, 8 * MiB)
    before = sha256_of(dev)
    discarded = _discarded_sectors(dev)
    for args in (("precondition", dev), ("run", dev, "--precondition")):
        code, out, err = cli(*args)
        assert code == 3, err
        assert out == "" and "--destructive" in err
    scratch.mkfs(dev)  # a filesystem: refused even with --destructive (mkfs discards)
    before = sha256_of(dev)
    discarded = _discarded_sectors(dev)
    code, _, err = cli("precondition", dev, "--destructive")
    assert code == 3 and "ext4" in err and "--overwrite-signatures" in err
    assert sha256_of(dev) == before
    assert _discarded_sectors(dev) == discarded
    assert _stored_runs(cli) == [], "a refused precondition stores nothing"


@pytest.mark.parametrize(
    "target",
    [
        "nbd://127.0.0.1:9/export",
        "nbds://192.0.2.1/x",
        "nbd+unix:///x?socket=/nonexistent/sock",
        "rbd:rbd/bench",
    ],
)
@pytest.mark.parametrize("command", ["precondition", "run", "doctor"])
def test_network_storage_is_refused_before_any_server_is_asked(
    cli: Cli, target: str, command: str
) -> None:
    args = [command, target, "--destructive"]
    if command != "precondition":
        args.append("--precondition")
    began = time.monotonic()
    code, out, err = cli(*args)
    assert code == 2, err
    said = " ".join((out + err).split())  # doctor folds long lines
    assert f"cannot precondition {target} (" in said
    assert "files and block devices of this host only" in said
    assert "unreachable" not in said and "connect" not in said.lower()
    assert time.monotonic() - began < 5, "nothing was looked up"
    assert _stored_runs(cli) == []


def test_precondition_does_not_go_with_clients_or_prefill(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path), "--clients", "127.0.0.1", "--precondition")
    assert code == 2 and "--precondition does not go with --clients" in err
    code, _, err = cli("run", str(tmp_path), "--prefill", "--precondition")
    assert code == 2 and "--prefill and --precondition" in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--bs", "1000"), "--bs 1000: the fill's block size must be a multiple of 4 KiB"),
        (("--bs", "0"), "must be a multiple of 4 KiB"),
        (("--bs", "128M"), "at most 64 MiB"),
        (("--bs", "lots"), "--bs: "),
        (("--size", "64k"), "--size 64k is smaller than the fill's block size (128 KiB)"),
        (("--passes", "0"), "--passes"),
        (("--overwrite-signatures",), "--overwrite-signatures only makes sense with"),
    ],
)
def test_bad_options_are_named(cli: Cli, tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    code, out, err = cli("precondition", str(tmp_path), *args)
    assert code == 2
    assert said in err and out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_directory_needs_a_size(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("precondition", str(tmp_path))
    assert code == 2
    assert "nothing says how large" in err and "--size 4G" in err
    assert list(tmp_path.iterdir()) == []


# -- files and directories ---------------------------------------------------------------------


def test_an_existing_file_needs_destructive(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 * MiB))
    before = path.read_bytes()
    code, out, err = cli("precondition", str(path))
    assert code == 3 and out == ""
    assert "existing file" in err and "--destructive" in err
    assert path.read_bytes() == before


def test_a_file_smaller_than_a_block_is_refused_before_its_purge(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    path = tmp_path / "tiny.dat"
    path.write_bytes(os.urandom(100_000))
    before = path.read_bytes()
    code, out, err = cli("precondition", str(path), "--destructive")
    assert code == 2 and out == ""
    assert "its test area (97.7 KiB) is smaller than the precondition's block size" in err
    assert path.read_bytes() == before
    code, _, err = cli("precondition", str(path), "--destructive", "--bs", "64k", "--passes", "1")
    assert code == 0, err


def test_an_existing_file_has_holes_punched_then_is_filled(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    path = tmp_path / "data.bin"
    _fill_random(str(path), 12 * MiB)
    before = path.read_bytes()
    code, doc, err = _precondition(cli, str(path), "--destructive", "--size", "8M")
    assert code == 0, err
    entry = doc["precondition"]["targets"][0]
    assert entry["purge"]["method"] == "punch-hole" and entry["purge"]["bytes"] == AREA
    assert "discards" in entry["purge"]["note"]
    assert entry["fill"]["bytes"] == 2 * AREA
    after = path.read_bytes()
    assert len(after) == 12 * MiB
    assert after[:AREA] != before[:AREA] and after[:AREA] != bytes(AREA)
    assert after[AREA:] == before[AREA:]
    assert path.stat().st_blocks * 512 >= 12 * MiB, "the holes were filled again"
    assert "punched holes over 8 MiB in" in err


def test_a_directory_gets_a_new_test_file_with_nothing_to_purge(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    code, out, err = cli("precondition", str(tmp_path), "--size", "4M", "--label", "dir")
    assert code == 0, err
    assert list(tmp_path.iterdir()) == [], "the test file is removed afterwards"
    assert "[1/1] fill (2 passes of sequential 128 KiB writes)" in err
    assert (
        "preconditioned: nothing to purge: iobench's own test file is new, "
        "then 2 x 4 MiB sequential 128 KiB writes in "
    ) in out
    code, shown, _ = cli("show", "latest", "--json")
    doc = json.loads(shown)
    assert doc["label"] == "dir"
    assert doc["precondition"]["targets"][0]["fill"]["bytes"] == 8 * MiB


# -- run --precondition ------------------------------------------------------------------------


@pytest.mark.root
def test_run_precondition_purges_and_fills_before_the_workloads(
    cli: Cli, scratch: Scratch, real_fio: str, mini_suite: str
) -> None:
    dev = scratch.loop(scratch.image(8 * MiB))  # never written: reads would measure holes
    code, out, err = cli("doctor", dev, "--suite", mini_suite, "--destructive")
    assert code == 0 and "[unwritten-read]" in out, err
    code, out, err = cli("doctor", dev, "--suite", mini_suite, "--destructive", "--precondition")
    assert code == 0, err
    assert "[unwritten-read]" not in out, "the fill writes the area before any read"
    for step in ("purge (discard)", "fill (2 passes of sequential 128 KiB writes)", "rr", "rw"):
        assert step in out
    assert "[iobench:fill]" in out and "loops=2" in out
    assert f"blkdiscard --offset 0 --length {4 * MiB} {dev}" in out
    code, out, err = cli("run", dev, "--suite", mini_suite, "--destructive", "--precondition")
    assert code == 0, err
    assert "[1/4] purge (discard)" in err and "[2/4] fill (" in err and "[3/4] rr" in err
    assert "preconditioned: discard of 4 MiB (" in out
    assert "then 2 x 4 MiB sequential 128 KiB writes in " in out
    code, exported, _ = cli("export", "latest", "--format", "json")
    doc = json.loads(exported)
    assert [r["workload"] for r in doc["results"]] == ["rr", "rw"]
    stored = doc["suite_def"]["precondition"]
    assert stored == doc["precondition"]
    assert stored["targets"][0]["fill"]["bytes"] == 8 * MiB
    assert not any(w["id"] == "unwritten-read" for w in doc["warnings"])


def test_run_precondition_in_a_directory_fills_the_test_file_in_place_of_the_layout(
    cli: Cli, tmp_path: Path, real_fio: str, mini_suite: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    code, out, err = cli("run", str(data), "--suite", mini_suite, "--precondition", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert "lay out test file" not in err and "[1/3] fill (2 passes" in err
    entry = doc["precondition"]["targets"][0]
    assert entry["purge"]["method"] == "none" and entry["fill"]["bytes"] == 2 * 4 * MiB
    assert [r["status"] for r in doc["results"]] == ["ok", "ok"]
    assert list(data.iterdir()) == []


# -- what is stored, as any reader meets it ----------------------------------------------------


def test_an_exported_precondition_comes_back_through_import(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    code, _, err = cli("precondition", str(tmp_path), "--size", "4M", "--passes", "1")
    assert code == 0, err
    code, exported, _ = cli("export", "latest", "--format", "json")
    code, shown, _ = cli("show", "latest", "--json")
    original = json.loads(shown)["precondition"]
    for name, text in (("export.json", exported), ("show.json", shown)):
        path = tmp_path.parent / f"{tmp_path.name}-{name}"
        path.write_text(text)
        db = str(tmp_path.parent / f"{tmp_path.name}-{name}.db")  # another database
        code, _, err = cli("--db", db, "import", str(path))
        assert code == 0, err
        code, again, _ = cli("--db", db, "show", "latest", "--json")
        assert json.loads(again)["precondition"] == original, name
        _, out, _ = cli("--db", db, "show", "latest")
        assert "preconditioned: nothing to purge" in out


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (None, []),
        ({}, ["preconditioned: nothing was done"]),
        ({"targets": [{"purge": {"method": "discard", "bytes": 1 << 30, "seconds": 0.25}}]},
         ["preconditioned: discard of 1 GiB (0.2s), then the fill did not finish"]),
        ({"targets": [{"area_bytes": 1 << 20, "purge": {"method": "punch-hole", "bytes": 1 << 20,
                       "seconds": 0.0004}, "fill": {"passes": 3, "bs": 4096, "seconds": 75,
                       "bw_bytes": 1 << 20}}]},
         ["preconditioned: holes punched over 1 MiB (0s), then 3 x 1 MiB sequential 4 KiB "
          "writes in 1m15s (1.00 MiB/s)"]),
        ({"targets": [{"target": "/a", "purge": {"method": "odd", "note": "why; more"},
                       "fill": {"passes": "two", "bs": None, "seconds": "x"}},
                      {"target": "/b", "purge": "garbage", "fill": []}, "junk"]},
         ["preconditioned /a: why, then - sequential - writes in ? (-)",
          "preconditioned /b: no purge, then the fill did not finish"]),
    ],
)  # fmt: skip
def test_the_header_line_reads_whatever_is_stored(stored: object, expected: list[str]) -> None:
    assert precondition_lines(stored) == expected  # type: ignore[arg-type]


@pytest.mark.root
def test_ctrl_c_during_the_fill_keeps_what_was_done(
    scratch: Scratch, real_fio: str, isolated_db: Path
) -> None:
    dev = scratch.loop(scratch.image(64 * MiB))
    argv = [sys.executable, "-m", "iobench", "precondition", dev, "--destructive"]
    proc = subprocess.Popen(
        [*argv, "--passes", "100"], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        seen = ""
        assert proc.stderr is not None
        for line in proc.stderr:
            seen += line
            if line.startswith("[1/2] purge"):
                break
        time.sleep(1.5)  # into the fill
        proc.send_signal(2)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, seen + err
    assert "[2/2] fill (100 passes of sequential 128 KiB writes) on" in err
    assert "interrupted" in err
    assert "status aborted" in out
    assert "preconditioned: discard of 64 MiB (" in out and "then the fill did not finish" in out
    shown = subprocess.run(
        [sys.executable, "-m", "iobench", "show", "latest", "--json"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    entry = json.loads(shown.stdout)["precondition"]["targets"][0]
    assert entry["purge"]["method"] == "discard" and "fill" not in entry


def test_several_targets_are_each_named_and_a_hostile_name_stays_on_its_line(
    cli: Cli, tmp_path: Path, real_fio: str
) -> None:
    odd = tmp_path / "x\x1b[31mred\nline [bold]b.dat"
    _fill_random(str(odd), 4 * MiB)
    data = tmp_path / "data"
    data.mkdir()
    code, out, err = cli(
        "precondition", str(odd), str(data), "--destructive", "--size", "4M", "--passes", "1"
    )
    assert code == 0, err
    assert "\x1b" not in out + err, "no terminal escape reaches the terminal"
    lines = [x for x in out.splitlines() if x.startswith("preconditioned")]
    assert len(lines) == 2
    assert (
        lines[0].startswith("preconditioned ") and "\\x1b[31mred\\nline [bold]b.dat: " in lines[0]
    )
    assert "holes punched over 4 MiB (" in lines[0]
    assert lines[1] == (
        f"preconditioned {data}: nothing to purge: iobench's own test file is new, then "
        f"1 x 4 MiB sequential 128 KiB writes in {lines[1].split(' writes in ')[1]}"
    )
    assert "[1/3] purge (punch-hole) on " in err and "[3/3] fill (1 pass of " in err
    assert list(data.iterdir()) == []
