"""Hostile suite files: a suite file is input to a program that usually runs as root and
ends up in a fio job file. Whatever is in it, iobench refuses with exit 2 and a message
naming the file, the line and what is wrong, and runs and writes nothing:

1. numbers written with digits other than ASCII 0-9 (which Python reads and fio does not);
2. values above the bounds no real user reaches (runtime, ramp, size, thinktime, rate,
   block sizes, and the I/O buffers bs x iodepth x numjobs that fio allocates), in suite
   files and in --runtime/--size/--ramp;
3. input built to crash a parser: huge numbers, infinities, deep nesting, huge strings,
   dates where numbers belong;
4. several mistakes in one file are all reported at once, each at its line, without
   cascades of errors that only follow from another one.
"""

from __future__ import annotations

import math
import os
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Cli
from iobench.errors import ExitCode, SuiteError, UserError
from iobench.suites import apply_overrides, load_builtin, load_suite_file, parse_suite

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


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """An empty directory to benchmark: it must stay empty."""
    path = tmp_path / "target"
    path.mkdir()
    return path


def refused(
    cli: Cli, target: Path, isolated_db: Path, text: str, *args: str, command: str = "doctor"
) -> tuple[Path, str]:
    """Run ``command`` on a suite file holding ``text``: exit 2, nothing on stdout, nothing
    written; (the suite file's path, stderr)."""
    path = target.parent / "hostile.toml"
    path.write_text(text, encoding="utf-8")
    code, out, err = cli(command, str(target), "--suite", str(path), *args)
    assert code == ExitCode.BAD_INPUT
    assert out == ""
    assert err.startswith("iobench: error: ")
    assert "internal error" not in err and "Traceback" not in err
    assert list(target.iterdir()) == []
    assert not isolated_db.exists()
    return path, err


def error(text: str, path: str = "hostile.toml") -> SuiteError:
    with pytest.raises(SuiteError) as info:
        parse_suite(text, path, path)
    assert info.value.exit_code == ExitCode.BAD_INPUT
    assert info.value.path == path
    return info.value


def put(line: str) -> tuple[str, int]:
    """BASE with ``line`` in place of the line of the same key, or appended; (text, line)."""
    key = line.partition(" = ")[0]
    lines = BASE.splitlines()
    for number, old in enumerate(lines, start=1):
        if number > 4 and old.startswith(f"{key} = "):
            lines[number - 1] = line
            return "\n".join(lines) + "\n", number
    return BASE + line + "\n", len(lines) + 1


def only(err: SuiteError) -> tuple[int | None, str]:
    """The line and the message of an error's only problem."""
    assert len(err.problems) == 1, err.message
    return err.line, err.problems[0].message


# --- 1. numbers are written with ASCII digits ---------------------------------------------

NON_ASCII = [
    ('bs = "\u0664k"', "ARABIC-INDIC DIGIT FOUR"),
    ('size = "\uff14G"', "FULLWIDTH DIGIT FOUR"),
    ('runtime = "3\u00b2s"', "SUPERSCRIPT TWO"),
    ('ramp = "\u096bs"', "DEVANAGARI DIGIT FIVE"),
    ('thinktime = "\u09e8ms"', "BENGALI DIGIT TWO"),
    ('rate = "\uff15\uff10M"', "FULLWIDTH DIGIT FIVE"),
    ('blockalign = "\U0001d7d2k"', "MATHEMATICAL BOLD DIGIT FOUR"),
    ('buffer_compress_chunk = "\u0e54k"', "THAI DIGIT FOUR"),
    ('bssplit = "4k/\u2464\u2460:8k/"', "CIRCLED DIGIT FIVE"),
    ('size = "1\u00bdG"', "VULGAR FRACTION ONE HALF"),
    ('random_distribution = "zoned:\u0664\u0660/60:60/40"', "ARABIC-INDIC DIGIT FOUR"),
    ('random_distribution = "zipf:1.\u0662"', "ARABIC-INDIC DIGIT TWO"),
]


@pytest.mark.parametrize(("line", "name"), NON_ASCII, ids=[n for _, n in NON_ASCII])
def test_a_number_with_a_digit_fio_cannot_read_is_refused_naming_it(
    cli: Cli, target: Path, isolated_db: Path, line: str, name: str
) -> None:
    key, _, value = line.partition(" = ")
    text, number = put(line)
    path, err = refused(cli, target, isolated_db, text)
    assert err.startswith(f'iobench: error: {path}:{number}: workload "w1": {key} must be ')
    assert "written with the ASCII digits 0-9; " in err
    assert f"({name}) in {value} is not one" in err


@settings(max_examples=60)
@given(
    digit=st.characters(categories=["Nd", "No", "Nl"]).filter(lambda c: not "0" <= c <= "9"),
    key_and_value=st.sampled_from(
        [
            ("bs", "{}k"),
            ("size", "1{}G"),
            ("runtime", "{}s"),
            ("ramp", "{}0"),
            ("thinktime", "{}ms"),
            ("rate", "{}M/s"),
            ("blockalign", "{}k"),
        ]
    ),
)
def test_every_non_ascii_digit_is_refused(digit: str, key_and_value: tuple[str, str]) -> None:
    key, value = key_and_value
    text, number = put(f'{key} = "{value.format(digit)}"')
    line, message = only(error(text))
    assert line == number
    assert message.startswith(f'workload "w1": {key} must be ')
    assert f'"{digit}" ({unicodedata.name(digit)})' in message


@pytest.mark.parametrize(
    ("expectation", "name"),
    [
        ("w1.read.iops>=\u0665k", "ARABIC-INDIC DIGIT FIVE"),
        ("w1.read.bw>=\uff12\uff10\uff10MB/s", "FULLWIDTH DIGIT TWO"),
        ("w1.read.p99<5\u00b3ms", "SUPERSCRIPT THREE"),
        ("w1.read.p9\u2079<5ms", "SUPERSCRIPT NINE"),
    ],
)
def test_an_expectation_with_a_non_ascii_digit_is_refused(
    cli: Cli, target: Path, isolated_db: Path, expectation: str, name: str
) -> None:
    text = BASE.replace("description", f'expect = ["{expectation}"]\ndescription')
    path, err = refused(cli, target, isolated_db, text)
    assert err.startswith(f"iobench: error: {path}:2: expect {expectation!r}: ")
    assert f"({name}) is not an ASCII digit; write numbers with 0-9" in err


@pytest.mark.parametrize(
    ("option", "value", "name"),
    [
        ("--size", "\uff14G", "FULLWIDTH DIGIT FOUR"),
        ("--runtime", "\u0663\u0660s", "ARABIC-INDIC DIGIT THREE"),
        ("--ramp", "1\u00b9", "SUPERSCRIPT ONE"),
    ],
)
def test_an_option_with_a_non_ascii_digit_is_refused(
    cli: Cli, target: Path, isolated_db: Path, option: str, value: str, name: str
) -> None:
    code, out, err = cli("doctor", str(target), "--suite", "quick", option, value)
    assert (code, out) == (ExitCode.BAD_INPUT, "")
    assert err.startswith(f"iobench: error: {option}: {value!r}: ")
    assert f"({name}) is not an ASCII digit; write numbers with 0-9" in err
    assert list(target.iterdir()) == [] and not isolated_db.exists()


# --- 2. bounds ----------------------------------------------------------------------------

TOO_LARGE = [
    ('runtime = "8d"', "runtime must be at most 7d (a week; no measurement needs longer), "
     'not "8d"'),
    ("runtime = 604801", "runtime must be at most 7d"),
    ('ramp = "169h"', 'ramp must be at most 7d (a week; no warm-up needs longer), not "169h"'),
    ('size = "2P"', 'size must be at most 1P (larger than any single device), not "2P"'),
    ("size = 1125899906842625", "size must be at most 1P"),
    ('thinktime = "61m"', "thinktime must be at most 1h (fio counts it in microseconds in 32 bits"),
    ('rate = "2T"', 'rate must be at most 1T/s (faster than any storage; a higher cap is no cap)'),
    ("rate = 2199023255552", "rate must be at most 1T/s"),
    ('bs = "2G"', 'bs must be at most 1G, not "2G"'),
    ('bssplit = "4k/50:2G/50"', 'bssplit block sizes must be at most 1G, like bs; "2G/50"'),
    ('blockalign = "2G"', "blockalign must be at most 1G"),
    ('buffer_compress_chunk = "4G"', "buffer_compress_chunk must be at most 1G"),
    ('random_distribution = "zoned_abs:50/2P:50/1G"',
     "random_distribution: a zone of 2P is larger than 1P"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "message"), TOO_LARGE, ids=[t[0] for t in TOO_LARGE])
def test_a_value_above_its_bound_is_refused_with_the_bound(
    cli: Cli, target: Path, isolated_db: Path, line: str, message: str
) -> None:
    text, number = put(line)
    path, err = refused(cli, target, isolated_db, text)
    assert err.startswith(f'iobench: error: {path}:{number}: workload "w1": {message}')


def test_the_bounds_themselves_are_accepted() -> None:
    text = BASE.replace('bs = "4k"', 'bs = "1M"').replace("iodepth = 1", "iodepth = 4096")
    text = text.replace("numjobs = 1", "numjobs = 4")  # 1M x 4096 x 4 = 16 GiB of buffers
    text += 'runtime = "7d"\nramp = "168h"\nsize = "1P"\nthinktime = "1h"\nrate = "1T"\n'
    (w,) = parse_suite(text, "edge.toml", "edge.toml").workloads
    assert (w.runtime_s, w.ramp_s, w.size) == (7 * 86400, 7 * 86400, 1 << 50)
    assert ("thinktime", "3600000000us") in w.options
    assert ("rate", str(1 << 40)) in w.options


@pytest.mark.parametrize(
    ("bs", "iodepth", "numjobs", "extra", "message", "line"),
    [
        ("1G", 17, 1, "", "bs x iodepth x numjobs is 1G x 17 x 1 = 17 GiB", 9),
        ("64k", 4096, 256, "", "bs x iodepth x numjobs is 64k x 4096 x 256 = 64 GiB", 9),
        ("16M", 1024, 2, "", "bs x iodepth x numjobs is 16M x 1024 x 2 = 32 GiB", 9),
        ("4k", 32, 1, 'bssplit = "4k/50:1G/50"\n',
         "the largest bssplit size x iodepth x numjobs is 1G x 32 x 1 = 32 GiB", 10),
    ],
)  # fmt: skip
def test_io_buffers_fio_would_allocate_are_bounded(
    cli: Cli,
    target: Path,
    isolated_db: Path,
    bs: str,
    iodepth: int,
    numjobs: int,
    extra: str,
    message: str,
    line: int,
) -> None:
    text = (
        BASE.replace('bs = "4k"', f'bs = "{bs}"')
        .replace("iodepth = 1", f"iodepth = {iodepth}")
        .replace("numjobs = 1", f"numjobs = {numjobs}")
    ) + extra
    path, err = refused(cli, target, isolated_db, text)
    assert err == (
        f'iobench: error: {path}:{line}: workload "w1": {message} of I/O buffers, which fio '
        "allocates up front; at most 16 GiB\n"
    )


def test_io_buffers_are_reported_at_the_last_line_that_sets_one_of_them() -> None:
    text = BASE.replace(
        "\n[[workload]]", '\n[defaults]\nbs = "1G"\niodepth = 32\n\n[[workload]]'
    ).replace('bs = "4k"\niodepth = 1\n', "")
    line, message = only(error(text))
    assert line == 11  # numjobs, in the workload; bs and iodepth are on lines 5 and 6
    assert message.startswith('workload "w1": bs x iodepth x numjobs is 1G x 32 x 1 = 32 GiB')


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--runtime", "8d", "--runtime must be at most 7d (a week; no measurement needs "
         "longer), not 8d"),
        ("--ramp", "200h", "--ramp must be at most 7d (a week; no warm-up needs longer), not 200h"),
        ("--size", "2P", "--size must be at most 1P (larger than any single device), not 2P"),
        ("--runtime", "9" * 40, f"--runtime: '{'9' * 40}' is too large (40 digits)"),
        ("--size", "9" * 31 + "k", f"--size: '{'9' * 31}k' is too large (31 digits)"),
    ],
)  # fmt: skip
def test_overrides_have_the_same_bounds(
    cli: Cli, target: Path, isolated_db: Path, option: str, value: str, message: str
) -> None:
    code, out, err = cli("doctor", str(target), "--suite", "quick", option, value)
    assert (code, out, err) == (ExitCode.BAD_INPUT, "", f"iobench: error: {message}\n")
    assert list(target.iterdir()) == [] and not isolated_db.exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runtime_s": 10**400}, "--runtime must be at most 7d"),
        ({"runtime_s": math.inf}, "--runtime must be at most 7d (a week; no measurement needs "
         "longer), not inf"),
        ({"runtime_s": math.nan}, "--runtime must be longer than 0 seconds, not nan"),
        ({"ramp_s": math.nan}, "--ramp must be 0 seconds or longer, not nan"),
        ({"ramp_s": 10**400}, "--ramp must be at most 7d"),
        ({"size": 10**5000}, "--size must be at most 1P (larger than any single device), "
         "not a number of about 5000 digits"),
    ],
)  # fmt: skip
def test_overrides_given_in_python_are_bounded_too(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(UserError) as info:
        apply_overrides(load_builtin("quick"), **kwargs)  # type: ignore[arg-type]
    assert info.value.message.startswith(message)
    assert info.value.exit_code == ExitCode.BAD_INPUT


def test_an_override_at_the_bound_is_accepted() -> None:
    suite = apply_overrides(load_builtin("quick"), runtime_s=7 * 86400, size=1 << 50, ramp_s=0)
    assert {(w.runtime_s, w.size) for w in suite.workloads} == {(7 * 86400, 1 << 50)}


# --- 3. input built to crash a parser ------------------------------------------------------

DEEP_ARRAYS = "[" * 5000 + "]" * 5000
DEEP_TABLES = "{a=" * 3000 + "1" + "}" * 3000
DEEP_MIXED = "[{a=" * 1500 + "1" + "}]" * 1500

CRASHERS = [
    # huge integers, where an int, a size or a duration belongs
    ("iodepth = " + "1" * 400, None, 'workload "w1": iodepth must be a whole number from 1 to '
     "4096 (deeper queues only exhaust kernel and fio memory), not "
     "111111111111111111111111... (400 digits)"),
    ("numjobs = -" + "9" * 4000, None, "numjobs must be a whole number from 1 to 256"),
    ("rwmixread = " + "7" * 5000, None, "a number has thousands of digits, too many to read"),
    ("iodepth = 0x" + "f" * 5000, None, "not a number of about 6020 digits"),
    ("size = 0b" + "1" * 20000, None, "size must be at most 1P"),
    ("runtime = " + "9" * 400, None, "runtime must be at most 7d"),
    ("ramp = 0o" + "7" * 3000, None, "ramp must be at most 7d"),
    ("rate = " + "5" * 400, None, "rate must be at most 1T/s"),
    ("randseed = " + "1" * 50, None, "randseed must be a whole number from 0 to "
     "18446744073709551615, not 111111111111111111111111... (50 digits)"),
    # the same as strings, with and without units
    ('size = "' + "1" * 400 + 'k"', None, 'size must be at most 1P (larger than any single '
     'device), not "11111111111111111111111111111111..." (401 characters)'),
    ('runtime = "' + "1" * 31 + '"', None, "runtime must be at most 7d"),
    ('thinktime = "' + "9" * 400 + 'ms"', None, "thinktime must be at most 1h"),
    ('bs = "0.' + "0" * 400 + '1k"', None, "bs must be a size such as 4k, 1M, 20G or a number of "
     "bytes, not"),
    ('bssplit = "4k/' + "9" * 4000 + '"', None, "bssplit must be SIZE/PERCENT pairs"),
    ('random_distribution = "zipf:' + "9" * 400 + '"', None, "random_distribution must be random"),
    # floats that are not numbers, or too large to be finite
    ("runtime = 1e400", None, "runtime must be at most 7d (a week; no measurement needs longer), "
     "not inf"),
    ("runtime = inf", None, "runtime must be at most 7d"),
    ("runtime = -inf", None, "runtime must be a duration such as 30s, 2m or a number of seconds, "
     "not -inf"),
    ("ramp = nan", None, "ramp must be a duration such as 30s, 2m or a number of seconds, not nan"),
    ("ramp = +1.7976931348623157e308", None, "ramp must be at most 7d"),
    ("size = 1e400", None, "size must be a size such as 4k, 1M, 20G or a number of bytes, not inf"),
    ("iodepth = nan", None, "iodepth must be a whole number from 1 to 4096"),
    # deep nesting: tomllib recurses and gives up
    ("x = " + DEEP_ARRAYS, None, "arrays or inline tables are nested too deeply to read"),
    ("bs = " + DEEP_TABLES, None, "arrays or inline tables are nested too deeply to read"),
    ("rate = " + DEEP_MIXED, None, "arrays or inline tables are nested too deeply to read"),
    ("a" + ".a" * 5000 + " = 1", None, 'workload "w1": unknown key "a"'),
    ("size = " + "[" * 50 + "]" * 50, None, "size must be a size such as 4k"),
    # dates and times where numbers belong
    ("runtime = 2024-01-01", None, "runtime must be a duration such as 30s, 2m or a number of "
     "seconds, not the date 2024-01-01"),
    ("size = 07:32:00", None, "not the time 07:32:00"),
    ("iodepth = 1979-05-27T07:32:00Z", None, "not the date and time 1979-05-27T07:32:00+00:00"),
    ("rwmixread = 1979-05-27T00:32:00.999999", None, "rwmixread must be a whole number from 0"),
    # huge strings and keys
    ('size = "' + "1" * 100_000 + '"', None, "size: a string of 100000 characters is too long "
     "(at most 4096)"),
    ('rw = "' + "r" * 5000 + '"', None, "rw: a string of 5000 characters is too long"),
    ('"' + "k" * 5000 + '" = 1', None, f'unknown key "{"k" * 48}... (5000 characters)": '
     "fio 3.33 has no such option"),
    ('"\\u001b[2J\\u0007" = 1', 4, 'unknown key "\\u001b[2J\\u0007"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "at", "message"), CRASHERS, ids=[f"{c[0][:30]}-{i}" for i, c in enumerate(CRASHERS)]
)
def test_input_built_to_crash_the_parser_is_a_suite_error(
    cli: Cli, target: Path, isolated_db: Path, line: str, at: int | None, message: str
) -> None:
    text, number = put(line)
    path, err = refused(cli, target, isolated_db, text)
    assert err.startswith(f"iobench: error: {path}:{at or number}: ")
    assert message in err
    assert len(err) < 1000  # a huge value is cut short in the message


@pytest.mark.parametrize(
    ("text", "at", "message"),
    [
        (BASE.replace('"A test suite."', '"' + "x" * 5000 + '"'), 2,
         "description: a string of 5000 characters is too long (at most 4096)"),
        (BASE.replace('name = "mine"', 'name = "' + "n" * 9000 + '"'), 1,
         "name: a string of 9000 characters is too long"),
        (BASE.replace("description", 'expect = ["' + "w1.read.iops>=" + "1" * 400 + '"]\n'
                      "description"), 2, "iops takes a count such as 5000, 5k or 1.2M"),
        (BASE.replace("description", 'expect = ["' + "w" * 5000 + '"]\ndescription'), 2,
         "expect: a string of 5000 characters is too long"),
        (BASE.replace("description", "expect = " + "[" * 50 + '"x"' + "]" * 50 + "\ndescription"),
         2, "expect must be a list of strings, not an array"),
        (BASE.replace("description", "indicative = 1e400\ndescription"), 2,
         "indicative must be true or false, not inf"),
    ],
)  # fmt: skip
def test_hostile_top_level_values(
    cli: Cli, target: Path, isolated_db: Path, text: str, at: int, message: str
) -> None:
    path, err = refused(cli, target, isolated_db, text)
    assert err.startswith(f"iobench: error: {path}:{at}: ")
    assert message in err


def test_deep_nesting_in_a_later_line_after_strings_and_comments_is_found() -> None:
    text = BASE + 'x = "[[[[[[[[" # [[[[[[[[[[[\ny = """\n[[[[[\n"""\nz = ' + DEEP_ARRAYS + "\n"
    line, message = only(error(text))
    assert line == 14
    assert message.startswith("arrays or inline tables are nested too deeply to read")


def test_a_line_built_to_make_the_line_finder_backtrack_is_read_at_once() -> None:
    # Valid TOML; the pattern for table headers used to take minutes over such a line.
    text = BASE + "x = [\n[" + " " * 300_000 + "1]]\n"
    assert only(error(text)) == (
        10,
        'workload "w1": unknown key "x": fio 3.33 has no such option',
    )


def test_a_file_over_1_mib_is_refused_before_it_is_parsed(
    cli: Cli, target: Path, isolated_db: Path
) -> None:
    text = BASE + "# " + "x" * (1 << 20) + "\n"
    path, err = refused(cli, target, isolated_db, text)
    assert err == (
        f"iobench: error: {path}: is larger than 1 MiB; a suite file is a few kilobytes of TOML\n"
    )
    assert only(error(text)) == (
        None,
        "is larger than 1 MiB; a suite file is a few kilobytes of TOML",
    )


def test_an_endless_pipe_is_read_only_up_to_the_limit() -> None:
    """`--suite <(yes)`: a pipe that never ends is read up to 1 MiB and a byte."""
    endless = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        assert endless.stdout is not None
        with pytest.raises(SuiteError, match=r"^/dev/fd/\d+: is larger than 1 MiB"):
            load_suite_file(f"/dev/fd/{endless.stdout.fileno()}")
    finally:
        endless.kill()
        endless.wait()
        assert endless.stdout is not None
        endless.stdout.close()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_device_is_not_opened(device: str) -> None:
    """Opening a device can do something (a watchdog starts counting): refused unopened."""
    with pytest.raises(SuiteError, match=f"^{device}: is a character device, not a suite file$"):
        load_suite_file(device)


def test_a_toml_syntax_error_alone_is_still_reported(
    cli: Cli, target: Path, isolated_db: Path
) -> None:
    text = BASE.replace("iodepth = 1", "iodepth = = 1") + 'exec_prerun = "id"\n'
    path, err = refused(cli, target, isolated_db, text)
    assert err.startswith(f"iobench: error: {path}:8: not valid TOML: ")
    assert "exec_prerun" not in err


# --- 4. every mistake at once --------------------------------------------------------------

SEVERAL = """\
name = "several"
description = "Three mistakes."

[[workload]]
name = "w1"
rw = "randread"
iodepth = "lots"
bs = "4k"
numjobs = 1

# a comment
iodeph = 4
size = "1G"

exec_prerun = "rm -rf /"
"""


def test_three_mistakes_are_reported_together_each_at_its_line(
    cli: Cli, target: Path, isolated_db: Path
) -> None:
    path, err = refused(cli, target, isolated_db, SEVERAL)
    assert err == (
        f"iobench: error: {path} has 3 problems:\n"
        f'    - {path}:7: workload "w1": iodepth must be a whole number from 1 to 4096 (deeper '
        'queues only exhaust kernel and fio memory), not "lots"\n'
        f'    - {path}:12: workload "w1": unknown key "iodeph": fio 3.33 has no such option; '
        'did you mean "iodepth"?\n'
        f'    - {path}:15: workload "w1": exec_prerun is refused (runs programs): it runs a shell '
        "command before the job\n"
        "  what to do: See docs/suites.md.\n"
    )


def test_run_refuses_the_same_file_before_starting_anything(
    cli: Cli, target: Path, isolated_db: Path, fio_calls: Path
) -> None:
    _, err = refused(cli, target, isolated_db, SEVERAL, command="run")
    assert " has 3 problems:\n" in err
    assert not fio_calls.exists()


def test_the_error_carries_every_problem_and_keeps_its_old_attributes() -> None:
    err = error(SEVERAL, "several.toml")
    assert err.path == "several.toml"
    assert err.line == 7
    assert [p.line for p in err.problems] == [7, 12, 15]
    assert [p.hint for p in err.problems] == [None, None, "See docs/suites.md."]
    assert err.hint == "See docs/suites.md."
    assert err.message.startswith("several.toml has 3 problems:\n  - several.toml:7: ")
    assert str(err) == err.message


SPREAD = """\
name = "no;semicolons"
description = ""
indicative = "yes"
expect = ["w1.read.iops>=lots", "w2.read.iops>=5k", "nowhere.read.iops>=1"]

[defaults]
runtime = "0s"
sizee = "1G"

[[workload]]
name = "w1"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1

[[workload]]
name = "w2"
rw = "randwrite"
bs = "4k"
iodepth = 5000
numjobs = 1

[[workload]]
name = "w1"
rw = "read"
bs = "4k"
iodepth = 1
numjobs = 1
filename = "/dev/sda"
"""


def test_mistakes_everywhere_in_a_file_are_reported_in_file_order() -> None:
    err = error(SPREAD, "spread.toml")
    assert [(p.line, p.message[:60]) for p in err.problems] == [
        (1, "name must be 1-128 characters without a blank at either end,"),
        (2, 'description must be a non-empty string, not ""'),
        (3, 'indicative must be true or false, not "yes"'),
        (4, "expect 'w1.read.iops>=lots': iops takes a count such as 5000"),
        (7, '[defaults]: runtime must be longer than 0 seconds, not "0s"'),
        (8, '[defaults]: unknown key "sizee": fio 3.33 has no such option'),
        (21, 'workload "w2": iodepth must be a whole number from 1 to 4096'),
        (25, 'workload "w1": the name is already used by the workload at l'),
        (30, 'workload "w1": filename is refused: it chooses its own targe'),
    ]
    # Not reported: w2.read and "nowhere". [defaults] has a mistake, so no workload is
    # known for sure, and an expectation is checked only against a workload that is.


def test_an_expectation_is_checked_against_the_workloads_that_are_right() -> None:
    text = (
        BASE.replace(
            "description", 'expect = ["w1.write.iops>=5k", "w2.read.iops>=5k"]\ndescription'
        )
        + '\n[[workload]]\nname = "w2"\nrw = "raed"\n'
    )
    err = error(text)
    assert [(p.line, p.message[:46]) for p in err.problems] == [
        (2, "expect 'w1.write.iops>=5k': no write IO in w1 "),
        (12, 'workload "w2": missing bs, iodepth and numjobs'),
        (14, 'workload "w2": rw must be one of randread, ran'),
    ]  # w2.read is not checked: w2's rw is wrong, so what it does is not known


def test_a_wrong_default_is_reported_once_not_in_every_workload() -> None:
    text = """\
name = "d"
description = "A wrong default."
[defaults]
bs = "\u0664k"
iodepth = 1
numjobs = 1
[[workload]]
name = "w1"
rw = "read"
[[workload]]
name = "w2"
rw = "write"
"""
    line, message = only(error(text))
    assert line == 4
    assert message.startswith("[defaults]: bs must be a size such as 4k")


def test_defaults_that_are_not_a_table_do_not_make_every_key_missing() -> None:
    text = "defaults = 3\n" + BASE.replace('bs = "4k"\n', "")
    line, message = only(error(text))
    assert line == 1
    assert message == "defaults must be a table ([defaults] followed by key = value lines), not 3"


@pytest.mark.parametrize(
    ("old", "new", "lines"),
    [
        # a wrong rw: rwmixread is not also wrong for it
        ('rw = "randread"', 'rw = "randomread"\nrwmixread = 70', [6]),
        # a wrong bs: size is not also "smaller than bs"
        ('bs = "4k"', 'bs = "\uff14M"\nsize = "1k"', [7]),
        # a wrong bssplit: the I/O buffers are not guessed without it
        ("iodepth = 1", 'iodepth = 4096\nbssplit = "1G/2000"', [9]),
        # a wrong iodepth: neither are they without it
        ("iodepth = 1", 'iodepth = "deep"\nbssplit = "1G/50:4k/50"', [8]),
        # a wrong name: the workload's other mistakes are still reported, by number
        ('name = "w1"', 'name = "w;1"\nsize = "0"', [5, 6]),
        # all required keys missing: one problem, not four
        ('rw = "randread"\nbs = "4k"\niodepth = 1\nnumjobs = 1\n', "", [4]),
    ],
)
def test_mistakes_that_follow_from_another_are_not_reported(
    old: str, new: str, lines: list[int]
) -> None:
    err = error(BASE.replace(old, new))
    assert [p.line for p in err.problems] == lines
    assert all(p.message.startswith(("workload ", "[defaults]: ")) for p in err.problems)


def test_a_missing_name_and_several_missing_keys_read_well() -> None:
    text = BASE.replace('name = "w1"\n', "").replace('bs = "4k"\niodepth = 1\n', "")
    err = error(text)
    assert [(p.line, p.message) for p in err.problems] == [
        (4, 'workload #1: missing name, e.g. name = "randread-4k"'),
        (4, "workload #1: missing bs and iodepth (set them in the workload or in [defaults])"),
    ]


def test_a_hostile_number_of_mistakes_is_listed_up_to_twenty() -> None:
    text = BASE + "".join(f"unknown{i} = {i}\n" for i in range(5000))
    err = error(text)
    assert len(err.problems) == 5000
    lines = err.message.splitlines()
    assert lines[0] == "hostile.toml has 5000 problems:"
    assert len(lines) == 22
    assert lines[1] == (
        '  - hostile.toml:10: workload "w1": unknown key "unknown0": fio 3.33 has no such option'
    )
    assert lines[-1] == "  - and 4980 more"


MISTAKES = {
    # key: (line, what the message says)
    "iodeph": ("iodeph = 4", 'unknown key "iodeph": fio 3.33 has no such option; did you mean'),
    "exec_prerun": ('exec_prerun = "id"', "exec_prerun is refused (runs programs)"),
    "thinktime": ('thinktime = "\uff15ms"', "(FULLWIDTH DIGIT FIVE)"),
    "rate": ('rate = "2T"', "rate must be at most 1T/s"),
    "runtime": ("runtime = 1e400", "runtime must be at most 7d"),
    "direct": ("direct = 1", "direct must be true or false, not 1"),
    "x": ("x = [[[[1]]]]", 'unknown key "x"'),
    "ramp": ('ramp = "${HOME}"', 'ramp: "${" is refused'),
    "size": ('size = "' + "9" * 5000 + '"', "size: a string of 5000 characters is too long"),
}


@settings(max_examples=40)
@given(
    defaults=st.lists(st.sampled_from(sorted(MISTAKES)), unique=True, max_size=3),
    workloads=st.lists(
        st.lists(st.sampled_from(sorted(MISTAKES)), unique=True, max_size=4),
        min_size=1,
        max_size=4,
    ),
    padding=st.sampled_from(["", "# a comment\n", "\n\n"]),
)
def test_every_mistake_is_reported_once_at_its_line(
    defaults: list[str], workloads: list[list[str]], padding: str
) -> None:
    lines = ['name = "prop"', 'description = """', "[[workload]]", 'iodepth = "x"', '"""']
    expected: list[tuple[int, str]] = []

    def add(where: str, keys: list[str]) -> None:
        for key in keys:
            lines.append(MISTAKES[key][0])
            expected.append((len(lines), where + MISTAKES[key][1]))
            lines.extend(padding.splitlines())

    lines.append("[defaults]")
    add("[defaults]: ", defaults)
    for index, keys in enumerate(workloads):
        lines += [*padding.splitlines(), "[[workload]]", f'name = "w{index}"', 'rw = "read"']
        lines.append('bs = "4k"')
        lines += ["iodepth = 1", "numjobs = 1"]
        add(f'workload "w{index}": ', keys)
    text = "\n".join(lines) + "\n"
    if not expected:
        assert parse_suite(text, "prop.toml", "prop.toml").name == "prop"
        return
    err = error(text, "prop.toml")
    assert [p.line for p in err.problems] == [line for line, _ in expected]
    for problem, (_, fragment) in zip(err.problems, expected, strict=True):
        where, _, what = fragment.partition(": ")
        assert problem.message.startswith(where + ": ")
        assert what in problem.message


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("sweep", "--runtime", "30d"), "--runtime must be at most 7d"),
        (("sweep", "--ramp", "8d"), "--ramp must be at most 7d"),
        (("sweep", "--size", "2P"), "--size must be at most 1P"),
        (("sweep", "--runtime", "\u0665s"), "ARABIC-INDIC DIGIT FIVE"),
        (("characterize", "--max-time", "30d"), "--max-time must be at most 7d"),
        (("characterize", "--size", "9" * 400), "--size"),
    ],
)
def test_sweep_and_characterize_have_the_bounds_of_a_suite(
    cli: Cli, tmp_path: Path, isolated_db: Path, args: tuple[str, ...], said: str
) -> None:
    code, out, err = cli(args[0], str(tmp_path), *args[1:])
    assert code == ExitCode.BAD_INPUT, err
    assert said in err and "internal error" not in err
    assert out == "" and list(tmp_path.iterdir()) == [] and not isolated_db.exists()


def test_a_fifo_nobody_writes_to_is_an_empty_suite_not_a_hang(
    cli: Cli, tmp_path: Path, target: Path, isolated_db: Path
) -> None:
    fifo = tmp_path / "suite.toml"
    os.mkfifo(fifo)
    code, out, err = cli("doctor", str(target), "--suite", str(fifo))
    assert code == ExitCode.BAD_INPUT
    assert err.startswith(
        f"iobench: error: {fifo}: is a named pipe (FIFO) that gave no text (nothing wrote to "
        "it): a suite file is TOML"
    ), err
    assert out == "" and list(target.iterdir()) == [] and not isolated_db.exists()


def test_a_suite_from_a_pipe_is_read(target: Path) -> None:
    """`--suite <(generate-suite)`: the shell hands over /dev/fd/N, a pipe."""
    read, write = os.pipe()
    try:
        os.write(write, QUICK_TEXT.encode())
        os.close(write)
        suite = load_suite_file(f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert suite.name == "piped" and [w.name for w in suite.workloads] == ["w"]


QUICK_TEXT = """\
name = "piped"
description = "from a pipe"
[[workload]]
name = "w"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
"""
