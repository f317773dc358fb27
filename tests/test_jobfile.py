from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from iobench.fio.jobfile import (
    TARGET_LINK,
    build_jobfile,
    build_layout_jobfile,
    plain_filename,
    plain_job,
    plain_layout_job,
)
from iobench.model import Workload
from iobench.targets import Reach


def _w(**kw: object) -> Workload:
    base: dict[str, object] = {
        "name": "randread-4k-qd1",
        "rw": "randread",
        "bs": 4096,
        "iodepth": 1,
        "numjobs": 1,
        "runtime_s": 2.0,
    }
    base.update(kw)
    return Workload(**base)  # type: ignore[arg-type]


def _options(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(";"):
            key, value = line.split("=", 1)
            out[key] = value
    return out


def test_jobfile_measures_latency_in_full_and_groups_jobs() -> None:
    opts = _options(build_jobfile(_w(numjobs=4, iodepth=32), Reach.file("/data/t.dat"), 16 << 20))
    assert opts["filename"] == TARGET_LINK
    assert opts["size"] == str(16 << 20)
    assert opts["numjobs"] == "4"
    assert opts["iodepth"] == "32"
    assert opts["group_reporting"] == "1"
    assert opts["lat_percentiles"] == "1"
    assert opts["clat_percentiles"] == "1"
    assert opts["time_based"] == "1"
    assert opts["runtime"] == "2s"
    assert "gtod_reduce" not in opts
    assert "ramp_time" not in opts


def test_jobfile_carries_ramp_mix_and_safe_options_in_order() -> None:
    text = build_jobfile(
        _w(
            rw="randrw", rwmixread=70, ramp_s=1.5, options=(("fsync", "4"), ("refill_buffers", "1"))
        ),
        Reach.file("/d/f"),
        1 << 20,
    )
    opts = _options(text)
    assert opts["rwmixread"] == "70"
    assert opts["ramp_time"] == "1500ms"
    assert text.index("fsync=4") < text.index("refill_buffers=1")


def test_time_based_false_runs_until_size_is_covered() -> None:
    opts = _options(
        build_jobfile(_w(rw="write", options=(("time_based", "0"),)), Reach.file("/d/f"), 1 << 20)
    )
    assert "time_based" not in opts


@pytest.mark.parametrize("path", ["/srv/a#b;c/f", "/mnt/a:b\\c/f ", "/x/$ncpus/${HOME}", "/x/a\nb"])
def test_any_path_reaches_fio_through_the_link_and_stays_in_a_comment(path: str) -> None:
    for text in (
        build_jobfile(_w(), Reach.file(path), 1 << 20),
        build_layout_jobfile(Reach.file(path), 1 << 20),
    ):
        lines = text.splitlines()
        assert f"filename={TARGET_LINK}" in lines
        comments = [line for line in lines if line.startswith("; target: ")]
        assert comments == [f"; target: {json.dumps(path)} (fio reaches it as ./{TARGET_LINK})"]
        assert path not in [line.split("=", 1)[-1] for line in lines if "=" in line]


@pytest.mark.fio
def test_fio_accepts_the_generated_job_files(real_fio: str, tmp_path: Path) -> None:
    for text in (
        build_jobfile(
            _w(rw="randrw", rwmixread=70, options=(("fsync", "4"),)),
            Reach.file(str(tmp_path / "f")),
            1 << 20,
        ),
        build_layout_jobfile(Reach.file(str(tmp_path / "f")), 1 << 20),
    ):
        job = tmp_path / "job.fio"
        job.write_text(text)
        proc = subprocess.run(
            [real_fio, "--parse-only", str(job)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


# Options iobench itself puts in the job files it sends to fio servers (docs/clients.md):
# none runs a command, loads code or names a file other than iobench's own test file.
SENT_TO_SERVERS = {
    "filename", "size", "ioengine", "direct", "runtime", "time_based", "ramp_time",
    "group_reporting", "clat_percentiles", "lat_percentiles", "percentile_list",
    "randrepeat", "write_iops_log", "write_bw_log", "write_lat_log", "log_avg_msec",
    "log_unix_epoch", "rw", "bs", "iodepth", "numjobs", "refill_buffers", "end_fsync",
    "unlink", "rwmixread",
}  # fmt: skip


def test_what_goes_to_a_fio_server_runs_no_command_and_touches_only_its_file() -> None:
    from iobench.clients import _probe_job
    from iobench.fio.jobfile import build_cleanup_jobfile
    from iobench.suites import builtin_names, load_builtin
    from iobench.suites.options import IOENGINES, OPTION_KEYS, refusal

    path = "/mnt/shared/iobench-0123abcd-c2.dat"
    jobs = [
        build_layout_jobfile(Reach.file(path), 1 << 20, remote=True),
        build_cleanup_jobfile(path),
    ]
    probe = _probe_job("iobench-probe-0123abcd", "p3")  # `clients check`: a null-engine read
    for name in builtin_names():
        jobs += [
            build_jobfile(w, Reach.file(path), w.size, client="c2")
            for w in load_builtin(name).workloads
        ]
    for job in jobs:
        assert "${" not in job and "$(" not in job and "`" not in job
        options = [line.split("=", 1) for line in job.splitlines() if "=" in line]
        for key, value in options:
            # A suite's own options passed the suite allow-list; everything else is ours.
            assert key in SENT_TO_SERVERS or (key in OPTION_KEYS and refusal(key) is None), key
            assert not key.startswith(("exec_", "trigger", "cgroup")), key
            if key == "ioengine":
                assert value in IOENGINES, value
            if key == "filename":
                assert value == path
            if key.startswith("write_") and key.endswith("_log"):
                # fio's client writes these in its own temp dir, each server's by its tag
                assert value == "iobench-c2"
        assert "on the fio server" in job
    assert "filename" not in probe and "ioengine=null" in probe
    for line in probe.splitlines()[1:]:
        key, value = line.split("=", 1)
        assert key in SENT_TO_SERVERS and (key != "write_lat_log" or value == "iobench-p3")


# -- job files for plain fio (`iobench doctor`) ------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("/mnt/vol/iobench-1-ab.dat", "/mnt/vol/iobench-1-ab.dat"),
        ("/mnt/a b/é,=\"'%&()[]{}*?!|<>`~@^+/f", "/mnt/a b/é,=\"'%&()[]{}*?!|<>`~@^+/f"),
        ("/dev/disk/by-path/pci-0000:00:1f.2", "/dev/disk/by-path/pci-0000\\:00\\:1f.2"),
    ],
)
def test_a_path_fio_reads_as_itself_is_named_with_its_colons_escaped(path: str, value: str) -> None:
    assert plain_filename(path) == value


@pytest.mark.parametrize(
    "path", ["/srv/a#b", "/srv/a;b", "/x/$ncpus", "/x/${HOME}", "/x/a\\b", "/x/t ", "/x/a\nb"]
)
def test_a_path_fio_would_misread_has_no_filename_value(path: str) -> None:
    """fio cuts values at ';' and '#', expands '$', strips trailing blanks, and a control
    character does not paste: such a path is reached through ./target, as iobench does."""
    assert plain_filename(path) is None
    text = plain_job(_w(), Reach.file(path), 1 << 20, section="rr", title="t")
    assert f"filename={TARGET_LINK}" in text.splitlines()
    assert f"; target: {json.dumps(path)}: fio cannot take this path" in text
    assert ("ln -s -- " in text) == path.isprintable()
    options = [line for line in text.splitlines() if not line.startswith(";")]
    assert all(path not in line for line in options), "only in comments"


def test_a_plain_job_holds_the_options_of_the_job_file_iobench_runs() -> None:
    w = _w(rw="randrw", rwmixread=70, ramp_s=1.0, options=(("fsync", "4"), ("time_based", "0")))
    ran = _options(build_jobfile(w, Reach.file("/d/f.dat"), 1 << 20))
    shown = plain_job(w, Reach.file("/d/f.dat"), 1 << 20, section="mixed", title="a title")
    assert shown.startswith("; a title\n[mixed]\n") and shown.endswith("stonewall\n")
    assert "[global]" not in shown  # one file holds every step: a [global] would carry over
    # But allow_file_create=0: iobench's target exists; plain fio makes the file it names.
    assert ran.pop("allow_file_create") == "0"
    assert _options(shown) == {**ran, "filename": "/d/f.dat"}
    layout = plain_layout_job(
        Reach.file("/d/f.dat"), 1 << 20, direct=False, section="layout", title="t"
    )
    ran_layout = _options(build_layout_jobfile(Reach.file("/d/f.dat"), 1 << 20, direct=False))
    assert ran_layout.pop("allow_file_create") == "0"
    assert _options(layout) == {**ran_layout, "filename": "/d/f.dat"}


@pytest.mark.fio
def test_plain_fio_runs_a_plain_job_on_the_file_it_names(real_fio: str, tmp_path: Path) -> None:
    """A path with blanks and colons is read by its name; one fio cannot name is reached
    through ./target after the `ln -s` its comment gives."""
    for name in ("a b: c", "d#1;$ncpus"):
        where = tmp_path / name
        where.mkdir()
        data = where / "f.dat"
        data.write_bytes(os.urandom(1 << 20))
        work = tmp_path / f"work-{len(name)}"
        work.mkdir()
        job = work / "job.fio"
        layout = plain_layout_job(
            Reach.file(str(data)), 1 << 20, direct=False, section="layout", title="t"
        )
        read = plain_job(_w(runtime_s=1.0), Reach.file(str(data)), 1 << 20, section="rr", title="t")
        job.write_text(layout + "\n" + read)
        if plain_filename(str(data)) is None:
            (work / TARGET_LINK).symlink_to(data)
        proc = subprocess.run(
            [real_fio, "--output-format=json", "--output=out.json", "job.fio"],
            cwd=work, capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        jobs = json.loads((work / "out.json").read_text())["jobs"]
        assert [(j["jobname"], j["groupid"]) for j in jobs] == [("layout", 0), ("rr", 1)]
        assert jobs[0]["write"]["io_bytes"] == 1 << 20 and jobs[1]["read"]["io_bytes"] > 0
        assert sorted(p.name for p in where.iterdir()) == ["f.dat"], "no other file made"
