"""Suites: the built-in ones carry the seeds' exact parameters; users' files are checked
strictly, and every mistake is reported at the right line with what is accepted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iobench.errors import ExitCode, SuiteError, UserError
from iobench.model import Fitted, Suite, Workload
from iobench.suites import (
    DEFAULT_SUITE,
    apply_overrides,
    builtin_names,
    fit_to_cpus,
    load_builtin,
    load_suite,
    load_suite_file,
    parse_suite,
)
from iobench.suites.fit import fitted_iodepth
from iobench.suites.options import MAX_IODEPTH, NO_OPS
from iobench.units import format_size_short

K, M, G = 1 << 10, 1 << 20, 1 << 30

# --- built-in suites ---------------------------------------------------------------------

# (name, rw, bs, iodepth, numjobs, runtime_s, ramp_s, size)
Shape = tuple[str, str, int, int, int, float, float, int]

SIX_CLASSIC = [
    ("randread-4k-qd1", "randread", 4 * K, 1, 1),
    ("randwrite-4k-qd1", "randwrite", 4 * K, 1, 1),
    ("randread-4k-qd32x4", "randread", 4 * K, 32, 4),
    ("randwrite-4k-qd32x4", "randwrite", 4 * K, 32, 4),
    ("read-256k-qd32x4", "read", 256 * K, 32, 4),
    ("write-256k-qd32x4", "write", 256 * K, 32, 4),
]

EXPECTED: dict[str, list[Shape]] = {
    "quick": [(*w, 5.0, 1.0, 256 * M) for w in SIX_CLASSIC],
    "standard": [(*w, 60.0, 5.0, 4 * G) for w in SIX_CLASSIC],
    # DigitalOcean volume guide: 120 s each, size >= 20 GB recommended.
    "volume": [
        ("bw-test", "randwrite", 1 * M, 32, 1, 120.0, 0.0, 20 * G),
        ("rand-r", "randread", 4 * K, 128, 1, 120.0, 0.0, 20 * G),
        ("rand-w", "randwrite", 4 * K, 128, 1, 120.0, 0.0, 20 * G),
        ("lat-read", "randread", 4 * K, 1, 1, 120.0, 0.0, 20 * G),
        ("lat-write", "randwrite", 4 * K, 1, 1, 120.0, 0.0, 20 * G),
    ],
    # UCloud RSSD tutorial: size=200G, 120 s.
    "cloud-disk": [
        ("read-4k-qd1", "read", 4 * K, 1, 1, 120.0, 0.0, 200 * G),
        ("write-4k-qd1", "write", 4 * K, 1, 1, 120.0, 0.0, 200 * G),
        ("read-256k-qd32x4", "read", 256 * K, 32, 4, 120.0, 0.0, 200 * G),
        ("write-256k-qd32x4", "write", 256 * K, 32, 4, 120.0, 0.0, 200 * G),
        ("randread-4k-qd32x4", "randread", 4 * K, 32, 4, 120.0, 0.0, 200 * G),
        ("randwrite-4k-qd32x4", "randwrite", 4 * K, 32, 4, 120.0, 0.0, 200 * G),
    ],
    # Ceph vs local SSD: randwrite 4k QD32 x 4 jobs, 60 s, 2 GiB file.
    "randwrite-4x32": [("randwrite-4k-qd32x4", "randwrite", 4 * K, 32, 4, 60.0, 0.0, 2 * G)],
    # dd bs=1G count=1 oflag=dsync, then read back: 1 GiB in 1M blocks, runtime only a cap.
    "dd": [
        ("write-dsync", "write", 1 * M, 1, 1, 600.0, 0.0, 1 * G),
        ("read-back", "read", 1 * M, 1, 1, 600.0, 0.0, 1 * G),
    ],
}


def shape(w: Workload) -> Shape:
    return (w.name, w.rw, w.bs, w.iodepth, w.numjobs, w.runtime_s, w.ramp_s, w.size)


def test_builtin_names_are_the_seeded_suites_and_quick_is_default() -> None:
    assert builtin_names() == [
        "cloud-disk", "dd", "orion-simple", "pts-iops", "quick", "randwrite-4x32", "standard",
        "volume",
    ]  # fmt: skip
    assert DEFAULT_SUITE == "quick"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builtin_suite_has_the_seeds_parameters(name: str) -> None:
    suite = load_builtin(name)
    assert suite.name == name
    assert suite.source == "builtin"
    assert [shape(w) for w in suite.workloads] == EXPECTED[name]


@pytest.mark.parametrize("name", ["quick", "standard", "volume", "cloud-disk", "randwrite-4x32"])
def test_fio_suites_use_libaio_direct_and_run_for_a_fixed_time(name: str) -> None:
    for w in load_builtin(name).workloads:
        assert (w.ioengine, w.direct, w.rwmixread, w.options) == ("libaio", True, None, ())


def test_pts_iops_is_the_pts_matrix_of_mixes_by_block_sizes() -> None:
    """SNIA PTS IOPS test: 7 read/write mixes x 8 block sizes, random, 60 s each."""
    suite = load_builtin("pts-iops")
    mixes = [100, 95, 65, 50, 35, 5, 0]
    sizes = [1 << 20, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 8 << 10, 4 << 10, 512]
    got = []
    for w in suite.workloads:
        mix = {"randread": 100, "randwrite": 0}.get(w.rw, w.rwmixread)
        assert mix is not None
        got.append((mix, w.bs))
        assert w.rw in ("randread", "randwrite", "randrw") and w.direct
        assert (w.runtime_s, w.ramp_s, w.numjobs, w.iodepth) == (60.0, 0.0, 2, 16)
        assert (
            w.name
            == f"rw{mix}-{100 - mix}-{'512b' if w.bs == 512 else format_size_short(w.bs).lower()}"
        )
    assert got == [(m, b) for m in mixes for b in sizes]


def test_dd_writes_with_o_dsync_buffered_and_runs_until_size_is_covered() -> None:
    write, read = load_builtin("dd").workloads
    for w in (write, read):
        assert (w.ioengine, w.direct) == ("psync", False)
        assert ("time_based", "0") in w.options
    assert dict(write.options) == {"time_based": "0", "sync": "dsync"}
    assert dict(read.options) == {"time_based": "0"}


def test_only_quick_is_indicative() -> None:
    assert {n: load_builtin(n).indicative for n in builtin_names()} == {
        "cloud-disk": False,
        "dd": False,
        "orion-simple": False,
        "pts-iops": False,
        "quick": True,
        "randwrite-4x32": False,
        "standard": False,
        "volume": False,
    }


def test_quick_description_explains_the_bandwidth_shape_and_is_short() -> None:
    description = load_builtin("quick").description
    assert "256k" in description and "RSSD" in description
    for name in builtin_names():
        text = load_builtin(name).description
        assert "\n" not in text
        assert 0 < text.count(". ") + 1 <= 2, (name, text)


# --- finding suites ----------------------------------------------------------------------


def test_load_suite_by_builtin_name_and_by_path(tmp_path: Path) -> None:
    assert load_suite("volume") == load_builtin("volume")
    path = write(tmp_path, GOOD)
    suite = load_suite(str(path))
    assert suite.name == "db-mix"
    assert suite.source == str(path)


def test_unknown_suite_name_lists_the_builtin_suites() -> None:
    with pytest.raises(UserError) as info:
        load_suite("quik")
    assert info.value.exit_code == ExitCode.BAD_INPUT
    assert info.value.message.startswith('unknown suite "quik"')
    assert "cloud-disk, dd, orion-simple, pts-iops, quick, randwrite-4x32, standard, volume" in (
        info.value.message
    )


def test_missing_suite_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(SuiteError) as info:
        load_suite(str(missing))
    assert str(info.value) == f"{missing}: no such file"


def test_non_utf8_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b'name = "\xff"\n')
    with pytest.raises(SuiteError, match="not UTF-8"):
        load_suite_file(path)


# --- overrides ---------------------------------------------------------------------------


def test_overrides_apply_to_every_workload_and_leave_the_rest_alone() -> None:
    suite = load_builtin("standard")
    short = apply_overrides(suite, runtime_s=2.0, size=16 * M, ramp_s=0.5)
    assert isinstance(short, Suite)
    assert [(w.runtime_s, w.ramp_s, w.size) for w in short.workloads] == [(2.0, 0.5, 16 * M)] * 6
    assert [(w.name, w.rw, w.bs, w.iodepth, w.numjobs) for w in short.workloads] == [
        (w.name, w.rw, w.bs, w.iodepth, w.numjobs) for w in suite.workloads
    ]
    assert (short.name, short.source, short.description) == (
        suite.name,
        suite.source,
        suite.description,
    )
    # the original is untouched
    assert [w.runtime_s for w in suite.workloads] == [60.0] * 6


def test_override_of_one_value_keeps_the_others() -> None:
    suite = apply_overrides(load_builtin("volume"), runtime_s=10)
    assert {(w.runtime_s, w.ramp_s, w.size) for w in suite.workloads} == {(10.0, 0.0, 20 * G)}


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"runtime_s": 0.0}, "runtime must be longer than 0 seconds"),
        ({"ramp_s": -1.0}, "ramp must be 0 seconds or longer"),
        ({"size": 0}, "size must be at least 1 byte"),
        ({"size": 4096}, "smaller than the block size of read-256k-qd32x4, write-256k-qd32x4"),
    ],
)
def test_bad_overrides_are_refused(kwargs: dict[str, float], fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        apply_overrides(load_builtin("quick"), **kwargs)  # type: ignore[arg-type]


# --- users' files: what loads ------------------------------------------------------------

GOOD = """\
name = "db-mix"
description = \"\"\"\\
70/30 random read/write at 16k,
on a big file.\"\"\"

[defaults]
runtime = "2m"
ramp = 10
size = "50G"
numjobs = 2
refill_buffers = true

[[workload]]
name = "mix-16k-qd16"
rw = "randrw"
rwmixread = 70
bs = "16k"
iodepth = 16
rate = "10M/s"
thinktime = "2ms"
bssplit = "4k/10:64k/50:32k/"
sync = true
random_distribution = "zipf:1.2"

[[workload]]
name = "seq-1m"
rw = "read"
bs = 1048576
iodepth = 4
runtime = 30.5
numjobs = 1
ioengine = "io_uring"
direct = false
time_based = false
"""


def write(tmp_path: Path, text: str, name: str = "my.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_good_file_with_defaults_loads(tmp_path: Path) -> None:
    suite = load_suite_file(write(tmp_path, GOOD))
    assert suite.name == "db-mix"
    assert suite.description == "70/30 random read/write at 16k, on a big file."
    assert suite.indicative is False
    mix, seq = suite.workloads
    assert mix == Workload(
        name="mix-16k-qd16",
        rw="randrw",
        bs=16 * K,
        iodepth=16,
        numjobs=2,
        ioengine="libaio",
        direct=True,
        runtime_s=120.0,
        ramp_s=10.0,
        size=50 * G,
        rwmixread=70,
        options=(
            ("refill_buffers", "1"),
            ("rate", str(10 * M)),
            ("thinktime", "2000us"),
            ("bssplit", "4096/10:65536/50:32768/"),
            ("sync", "sync"),
            ("random_distribution", "zipf:1.2"),
        ),
    )
    assert seq == Workload(
        name="seq-1m",
        rw="read",
        bs=M,
        iodepth=4,
        numjobs=1,
        ioengine="io_uring",
        direct=False,
        runtime_s=30.5,
        ramp_s=10.0,
        size=50 * G,
        rwmixread=None,
        options=(("refill_buffers", "1"), ("time_based", "0")),
    )


def test_builtin_defaults_fill_what_the_file_leaves_out(tmp_path: Path) -> None:
    (w,) = load_suite_file(write(tmp_path, BASE)).workloads
    assert (w.ioengine, w.direct, w.runtime_s, w.ramp_s, w.size, w.options) == (
        "libaio",
        True,
        60.0,
        0.0,
        G,
        (),
    )


# --- users' files: mistakes, each at its line ---------------------------------------------

# Line numbers: 1 name, 2 description, 4 [[workload]], 5 name, 6 rw, 7 bs, 8 iodepth,
# 9 numjobs; whatever a test appends starts at line 10.
BASE = """\
name = "mine"
description = "A test suite."

[[workload]]
name = "w1"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
"""


def error(tmp_path: Path, text: str) -> SuiteError:
    path = write(tmp_path, text)
    with pytest.raises(SuiteError) as info:
        load_suite_file(path)
    err = info.value
    assert err.exit_code == ExitCode.BAD_INPUT
    assert err.path == str(path)
    prefix = f"{path}:{err.line}: " if err.line else f"{path}: "
    assert str(err).startswith(prefix)
    return err


def detail(err: SuiteError) -> str:
    """The message after ``file:line: ``."""
    prefix = f"{err.path}:{err.line}: " if err.line else f"{err.path}: "
    return err.message.removeprefix(prefix)


def test_toml_syntax_error_names_its_line(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace("iodepth = 1", "iodepth = = 1"))
    assert err.line == 8
    assert detail(err).startswith("not valid TOML: ")
    assert "(column 11)" in detail(err)


def test_string_where_a_number_belongs(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace("iodepth = 1", 'iodepth = "lots"'))
    assert err.line == 8
    assert detail(err) == (
        'workload "w1": iodepth must be a whole number from 1 to 4096 '
        '(deeper queues only exhaust kernel and fio memory), not "lots"'
    )


def test_bool_is_not_a_number(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace("numjobs = 1", "numjobs = true"))
    assert err.line == 9
    assert "numjobs must be a whole number from 1 to 256" in detail(err)
    assert detail(err).endswith("not true")


def test_number_is_not_a_bool(tmp_path: Path) -> None:
    err = error(tmp_path, BASE + "direct = 1\n")
    assert err.line == 10
    assert detail(err) == 'workload "w1": direct must be true or false, not 1'


def test_numjobs_above_the_limit_says_why(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace("numjobs = 1", "numjobs = 1000"))
    assert err.line == 9
    assert "from 1 to 256 (each job is a process; more would exhaust the host)" in detail(err)


def test_unknown_rw_lists_the_modes(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace('rw = "randread"', 'rw = "randomread"'))
    assert err.line == 6
    assert detail(err).startswith('workload "w1": rw must be one of ')
    assert "randread, randrw, randtrim, randwrite, read" in detail(err)
    assert detail(err).endswith('not "randomread"')


def test_unknown_key_suggests_the_closest_and_says_fio_has_none(tmp_path: Path) -> None:
    err = error(tmp_path, BASE + "iodeph = 4\n")
    assert err.line == 10
    assert detail(err) == (
        'workload "w1": unknown key "iodeph": fio 3.33 has no such option; did you mean "iodepth"?'
    )


@pytest.mark.parametrize(
    ("line", "near"),
    [
        ("openfile = 3", "openfiles"),  # fio's own names, not the nearest allow-listed one
        ("verfy = 0", "verify"),
        ("nrfile = 2", "nrfiles"),
        ("iodepth_lo = 2", "iodepth_low"),
    ],
)
def test_an_unknown_key_is_compared_with_fios_own_option_names(
    tmp_path: Path, line: str, near: str
) -> None:
    err = error(tmp_path, BASE + line + "\n")
    assert detail(err).endswith(f'fio 3.33 has no such option; did you mean "{near}"?')


@pytest.mark.parametrize(
    "line",
    [
        "loops = 1",
        "nrfiles = 1",
        "verify = 0",
        'verify = "md5"',
        "do_verify = true",
        "startdelay = 1",
        "overwrite = true",
        'fallocate = "none"',
        "fadvise_hint = false",
        "openfiles = 1",
        'clocksource = "gettimeofday"',
        "iodepth_low = 1",
        "allow_file_create = true",
        "unified_rw_reporting = 0",
        "rate_iops = 0",
        "gtod_reduce = true",
        "prio = 4",
        'lockfile = "exclusive"',
    ],
)
def test_every_fio_option_outside_the_hazard_classes_is_accepted(tmp_path: Path, line: str) -> None:
    """fio's whole option set: a real option is never "unknown", and values that change
    nothing (loops=1, verify=0, rate_iops=0: no cap) are accepted as they are."""
    path = tmp_path / "s.toml"
    path.write_text(BASE + line + "\n")
    suite = load_suite_file(path)
    key, value = (part.strip().strip('"') for part in line.split("="))
    want = {"true": "1", "false": "0"}.get(value, value)
    if want in NO_OPS.get(key, ()):  # what iobench does anyway: accepted, left out
        assert key not in dict(suite.workloads[0].options)
    else:
        assert (key, want) in suite.workloads[0].options


def test_fio_spelling_of_an_iobench_key_names_the_iobench_key(tmp_path: Path) -> None:
    err = error(tmp_path, BASE + "ramp_time = 5\n")
    assert err.line == 10
    assert detail(err) == 'workload "w1": unknown key "ramp_time": iobench calls it ramp'


def test_misspelt_table_is_an_unknown_key_with_suggestion(tmp_path: Path) -> None:
    err = error(tmp_path, BASE + "\n[defualts]\nsize = 1\n")
    assert err.line == 11
    assert 'unknown key "defualts"; did you mean "defaults"?' in detail(err)


def test_workload_key_at_top_level_says_where_it_belongs(tmp_path: Path) -> None:
    err = error(tmp_path, "iodepth = 4\n" + BASE)
    assert err.line == 1
    assert "iodepth is a workload key: put it in [defaults]" in detail(err)


REFUSED = [
    # hazards (suites.hazards), in every suite: class and reason
    ('exec_prerun = "id"', "(runs programs): it runs a shell command before the job"),
    ('exec_postrun = "rm -rf /"', "(runs programs): it runs a shell command after the job"),
    ('ioengine = "exec"', "(runs programs): it runs a program"),
    ('ioengine = "external:/tmp/evil.so"', "(runs programs): it loads native code from a file"),
    ('ioengine = "filedelete"', "(not I/O to the target): it deletes files"),
    ('ioengine = "sg"', "past the kernel's block layer"),
    ('ioengine = "rados"', "(reaches endpoints): it connects to an endpoint named in the job file"),
    ('read_iolog = "/etc/shadow"', "(outside the target): it replays I/O recorded in a file"),
    ('replay_redirect = "/dev/sda"', "(outside the target): it sends replayed I/O to a device"),
    ('merge_blktrace_file = "/tmp/x"', "(outside the target): it writes a merged block trace"),
    ("allow_mounted_write = true", "(outside the target): it switches off fio's guard"),
    ("fill_device = true", "(outside the target): it writes until the device or file system"),
    ("fill_fs = true", "(outside the target): it writes until the device or file system"),
    ("file_append = true", "(outside the target): it writes after the end of the file"),
    ('mem = "mmap:/etc/passwd"', "with a path is refused: it maps a file of its own choosing"),
    ('zonemode = "zbd"', "(outside the target): it resets the zones of a zoned device"),
    ('cgroup = "evil"', "(changes the host): it creates a control group"),
    ("cgroup_nodelete = true", "(changes the host): it leaves a control group"),
    ('ioscheduler = "none"', "(changes the host): it switches the device's I/O scheduler"),
    ("stats = false", "(nothing to measure): it switches fio's statistics off"),
    ('profile = "tiobench"', "(nothing to measure): it makes jobs of its own"),
    # what iobench does itself, in a TOML suite (a job file's are replaced or left out)
    ('write_bw_log = "/tmp/bw"', "writes files at a path of its own choosing"),
    ('write_lat_log = "/tmp/lat"', "writes files at a path of its own choosing"),
    ('write_iops_log = "/tmp/iops"', "writes files at a path of its own choosing"),
    ('write_hist_log = "/tmp/hist"', "writes files at a path of its own choosing"),
    ('write_iolog = "/tmp/io"', "writes files at a path of its own choosing"),
    ("log_avg_msec = 500", "configures fio's log files"),
    ('filename = "/dev/sda"', "chooses its own target"),
    ('directory = "/etc"', "chooses its own target"),
    ('opendir = "/home"', "chooses its own target"),
    ('filename_format = "$jobname"', "chooses its own target"),
    ("unlink = true", "deletes files"),
    ("unlink_each_loop = true", "deletes files"),
    ("group_reporting = true", "iobench sets this itself"),
    ('output_format = "json"', "iobench sets this itself"),
    ("clat_percentiles = false", "iobench sets this itself"),
    ('unified_rw_reporting = "mixed"', "iobench sets this itself"),
]


@pytest.mark.parametrize(("line", "reason"), REFUSED)
def test_dangerous_option_is_refused_with_its_reason(
    tmp_path: Path, line: str, reason: str
) -> None:
    key = line.split(" =")[0]
    err = error(tmp_path, BASE + line + "\n")
    assert err.line == 10
    assert detail(err).startswith(f'workload "w1": {key}')
    assert reason in detail(err)


def test_refused_option_in_defaults_is_reported_at_its_line(tmp_path: Path) -> None:
    text = BASE.replace("\n[[workload]]", '\n[defaults]\nfilename = "/dev/sda"\n\n[[workload]]')
    err = error(tmp_path, text)
    assert err.line == 5
    assert detail(err).startswith("[defaults]: filename is refused: it chooses its own target")


def test_environment_expansion_is_refused(tmp_path: Path) -> None:
    err = error(tmp_path, BASE + 'bssplit = "4k/${HOME}"\n')
    assert err.line == 10
    assert detail(err).startswith('workload "w1": bssplit: "${" is refused')
    assert "environment variable" in detail(err)


def test_environment_expansion_in_a_name_is_refused(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace('name = "w1"', 'name = "${USER}"'))
    assert err.line == 5
    assert '"${" is refused' in detail(err)


def test_duplicate_workload_names(tmp_path: Path) -> None:
    err = error(tmp_path, BASE + "\n" + BASE.split("\n\n", 1)[1])
    assert err.line == 12
    assert detail(err) == (
        'workload "w1": the name is already used by the workload at line 5; '
        "names must be unique within a suite"
    )


def test_missing_workload_table(tmp_path: Path) -> None:
    err = error(tmp_path, 'name = "mine"\ndescription = "No workloads."\n')
    assert err.line is None
    assert detail(err).startswith("no workloads: add at least one [[workload]] table")


def test_single_brackets_instead_of_double(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace("[[workload]]", "[workload]"))
    assert err.line == 4
    assert "start each workload with [[workload]] (double brackets)" in detail(err)


def test_missing_required_key_points_at_the_workload(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace('bs = "4k"\n', ""))
    assert err.line == 4
    assert detail(err) == 'workload "w1": missing bs (set it in the workload or in [defaults])'


def test_a_suite_without_name_or_description_is_named_after_its_file(tmp_path: Path) -> None:
    text = BASE.replace('name = "mine"\n', "").replace('description = "A test suite."\n', "")
    suite = load_suite_file(write(tmp_path, text, "db mix.v2.toml"))
    assert (suite.name, suite.description) == ("db-mix.v2", "")
    assert [w.name for w in suite.workloads] == ["w1"]


def test_an_empty_description_written_out_is_still_refused(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace('"A test suite."', '""'))
    assert detail(err) == 'description must be a non-empty string, not ""'


@pytest.mark.parametrize("where", ["workload", "defaults"])
def test_rwmixread_on_a_pure_mode_changes_nothing_and_is_dropped(
    tmp_path: Path, where: str
) -> None:
    """fio ignores rwmixread unless the mode mixes reads and writes: the workload is
    accepted as if it were not there (its shape is the same as without it)."""
    text = (
        BASE + "rwmixread = 70\n"
        if where == "workload"
        else BASE.replace("\n[[workload]]", "\n[defaults]\nrwmixread = 70\n\n[[workload]]")
    )
    path = tmp_path / "s.toml"
    path.write_text(text)
    (w,) = load_suite_file(path).workloads
    assert w.rw == "randread" and w.rwmixread is None


def test_error_in_a_later_workload_after_a_multiline_string(tmp_path: Path) -> None:
    text = (
        BASE.replace('"A test suite."', '"""\nA test\nsuite.\niodepth = 3\n"""')
        + '\n[[workload]]\nname = "w2"\nrw = "read"\nbs = "1M"\niodepth = 0\nnumjobs = 1\n'
    )
    # description now spans lines 2-6; w1 starts at line 8, w2 at line 15, its iodepth is 19.
    err = error(tmp_path, text)
    assert err.line == 19
    assert detail(err).startswith('workload "w2": iodepth must be a whole number from 1 to 4096')


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('runtime = "0s"', 'runtime must be longer than 0 seconds, not "0s"'),
        ('runtime = "soon"', "runtime must be a duration such as 30s, 2m or a number of seconds"),
        ('size = "1k"', 'size ("1k", 1024 bytes) must be at least bs ("4k", 4096 bytes)'),
        ('size = "lots"', "size must be a size such as 4k, 1M, 20G or a number of bytes"),
        ('ioengine = "windowsaio"', 'ioengine="windowsaio" is refused (not in this fio)'),
        ("thinktime = 500", "fio reads a bare number as microseconds"),
        ('bssplit = "4k/60:8k/50"', "percentages add up to 110, more than 100"),
        ('bssplit = "4k/ten"', '"4k/ten" in "4k/ten" is not one'),
        ('random_distribution = "zipf"', "random_distribution must be random, zipf:THETA"),
        ('sync = "fsync"', 'sync must be true, false, "none", "sync" (O_SYNC) or "dsync"'),
        ("buffer_compress_percentage = 101", "must be a whole number from 0 to 100"),
        ('rate = "fast"', "rate must be bytes per second such as 50M"),
    ],
)
def test_bad_values_say_what_is_accepted(tmp_path: Path, line: str, fragment: str) -> None:
    err = error(tmp_path, BASE + line + "\n")
    assert err.line == 10
    assert fragment in detail(err)


def test_name_in_defaults_is_refused(tmp_path: Path) -> None:
    text = BASE.replace("\n[[workload]]", '\n[defaults]\nname = "x"\n\n[[workload]]')
    err = error(tmp_path, text)
    assert err.line == 5
    assert detail(err) == "[defaults]: name belongs in each [[workload]], not in [defaults]"


def test_bad_workload_name(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace('name = "w1"', 'name = "w 1]"'))
    assert err.line == 5
    assert detail(err).startswith("workload #1: name must be 1-128 characters without a blank")


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ('name = "w1"', 'name = "w1\\n[evil]"', 5),
        ('name = "w1"', 'name = "w1\\n"', 5),
        ('bs = "4k"', 'bs = "4k"\nrandom_distribution = "zipf:1.2\\nexec_prerun=id"', 8),
        ('bs = "4k"', 'bs = "4k"\nrandom_distribution = "zipf:1.2\\n"', 8),
    ],
)
def test_a_newline_cannot_smuggle_text_into_the_job_file(
    tmp_path: Path, old: str, new: str, line: int
) -> None:
    err = error(tmp_path, BASE.replace(old, new))
    assert err.line == line


@given(
    count=st.integers(min_value=1, max_value=5),
    data=st.data(),
    padding=st.lists(st.sampled_from(["", "# a comment", "  "]), min_size=12, max_size=12),
)
def test_errors_point_at_the_line_in_the_right_workload(
    count: int, data: st.DataObject, padding: list[str]
) -> None:
    bad = data.draw(st.integers(min_value=0, max_value=count - 1))
    lines = ['name = "prop"', 'description = """', "[[workload]]", 'iodepth = "x"', '"""']
    expected = 0
    for index in range(count):
        lines += [padding[index], "[[workload]]", f'name = "w{index}"', padding[index + 6]]
        lines += ['rw = "read"', 'bs = "4k"', "numjobs = 1"]
        lines.append('iodepth = "x"' if index == bad else "iodepth = 1")
        if index == bad:
            expected = len(lines)
    with pytest.raises(SuiteError) as info:
        parse_suite("\n".join(lines) + "\n", "prop.toml", "prop.toml")
    assert info.value.line == expected
    assert f'workload "w{bad}": iodepth must be a whole number' in info.value.message


def test_a_workload_cannot_be_named_global(tmp_path: Path) -> None:
    err = error(tmp_path, BASE.replace('name = "w1"', 'name = "global"'))
    assert err.line == 5
    assert "fio's section for shared options" in detail(err)


@pytest.mark.parametrize(
    "line",
    ['bssplit = "4k/\u00b2"', 'random_distribution = "zipf:\u0661.\u0662"'],
    ids=["superscript-digit", "arabic-digits"],
)
def test_non_ascii_digits_are_refused_not_crashed_on(tmp_path: Path, line: str) -> None:
    err = error(tmp_path, BASE + line + "\n")
    assert err.line == 10
    assert line.split(" =")[0] in detail(err)


def test_offset_is_fios_own(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(BASE + 'offset = "1G"\n')
    assert ("offset", "1G") in load_suite_file(path).workloads[0].options


def test_long_runtime_override_makes_quick_not_indicative() -> None:
    quick = load_builtin("quick")
    assert quick.indicative
    assert apply_overrides(quick, runtime_s=5).indicative
    assert not apply_overrides(quick, runtime_s=300).indicative
    assert apply_overrides(quick, size=1 << 20).indicative


def test_overrides_name_what_the_user_chose() -> None:
    quick = load_builtin("quick")
    assert quick.overridden == frozenset()
    assert apply_overrides(quick).overridden == frozenset()
    assert apply_overrides(quick, size=1 << 20).overridden == {"size"}
    both = apply_overrides(apply_overrides(quick, runtime_s=2), ramp_s=0)
    assert both.overridden == {"runtime", "ramp"}


# --- built-in suites fitted to the host's CPUs ----------------------------------------------


@pytest.mark.parametrize(
    ("cpus", "jobs", "depth"), [(1, 1, 128), (2, 2, 64), (3, 3, 43), (4, 4, 32), (64, 4, 32)]
)
def test_a_builtin_suite_runs_no_more_jobs_than_cpus(cpus: int, jobs: int, depth: int) -> None:
    quick = load_builtin("quick")
    fitted = fit_to_cpus(quick, cpus)
    shapes = {w.name: (w.numjobs, w.iodepth) for w in fitted.workloads}
    assert shapes == {
        "randread-4k-qd1": (1, 1),
        "randwrite-4k-qd1": (1, 1),
        "randread-4k-qd32x4": (jobs, depth),
        "randwrite-4k-qd32x4": (jobs, depth),
        "read-256k-qd32x4": (jobs, depth),
        "write-256k-qd32x4": (jobs, depth),
    }
    wide = [w.name for w in quick.workloads if w.numjobs == 4]
    assert fitted.fitted == (tuple(Fitted(name, 4, 32, cpus) for name in wide) if cpus < 4 else ())
    if cpus >= 4:
        assert fitted is quick  # nothing to fit: the suite as loaded
    # Only numjobs and iodepth change; names, so --expect and the reports, stay.
    for before, after in zip(quick.workloads, fitted.workloads, strict=True):
        assert before == dataclasses.replace(after, numjobs=before.numjobs, iodepth=before.iodepth)


@pytest.mark.parametrize(
    ("iodepth", "numjobs", "cpus", "fitted"),
    [
        (32, 4, 2, 64),  # 128 in flight, exactly
        (32, 4, 3, 43),  # 129 is nearer 128 than 126
        (5, 3, 2, 8),  # 14 and 16 are as near 15: the deeper
        (1, 5, 3, 2),  # 6 is nearer 5 than 3
        (1, 6, 4, 2),  # 4 and 8 are as near 6: the deeper
        (1, 64, 63, 1),  # 63 is as near as 63 jobs get to 64
        (4096, 256, 1, 4096),  # never deeper than a suite file may ask
    ],
)
def test_the_fitted_iodepth_keeps_the_ios_in_flight(
    iodepth: int, numjobs: int, cpus: int, fitted: int
) -> None:
    assert fitted_iodepth(iodepth, numjobs, cpus) == fitted
    suite = Suite("s", "d", (Workload("w", "randread", 4096, iodepth, numjobs),), "builtin")
    (w,) = fit_to_cpus(suite, cpus).workloads
    assert (w.numjobs, w.iodepth) == (cpus, fitted)


def test_a_users_suite_and_a_sync_engine_are_not_fitted(tmp_path: Path) -> None:
    mine = load_suite_file(write(tmp_path, GOOD.replace("numjobs = 1", "numjobs = 8")))
    assert any(w.numjobs == 8 for w in mine.workloads)
    assert fit_to_cpus(mine, 2) is mine
    # psync keeps one IO in flight per job whatever iodepth says: fewer jobs, less IO.
    sync = Suite("s", "d", (Workload("w", "read", 4096, 1, 4, ioengine="psync"),), "builtin")
    assert fit_to_cpus(sync, 2) is sync
    assert fit_to_cpus(load_builtin("quick"), None) == load_builtin("quick")


@given(
    iodepth=st.integers(1, MAX_IODEPTH),
    numjobs=st.integers(1, 256),
    cpus=st.integers(1, 256),
)
def test_no_other_iodepth_is_nearer(iodepth: int, numjobs: int, cpus: int) -> None:
    depth = fitted_iodepth(iodepth, numjobs, cpus)
    total = iodepth * numjobs
    assert 1 <= depth <= MAX_IODEPTH
    best = min(abs(d * cpus - total) for d in range(1, MAX_IODEPTH + 1))
    assert abs(depth * cpus - total) == best
