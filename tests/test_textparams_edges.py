"""The edges of reading a job's options from a pasted text (fio/textparams.py): where the
shell takes over a fio command line, getopt's next-word values, the job files it names,
the bounds of the header line's sizes, a job file shown with cat and where it ends, and
the options `iobench suites export` states in a job's description."""

from __future__ import annotations

import json

import pytest

from iobench.fio import textparams
from iobench.importer import interpret_fio_output
from test_import_text import RECORDED


def _jobs(line: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str]]], list[str]]:
    command = textparams.fio_command(line)
    assert command is not None
    return command.shared, command.jobs, command.job_files


@pytest.mark.parametrize("shell", ["|", ">", ">>", "2>&1", "&&", ";", "&", ">out.txt", "|tee"])
def test_what_follows_the_shell_s_operators_is_not_fio_s(shell: str) -> None:
    assert _jobs(f"$ fio --name=a --bs=4k {shell} --iodepth=8 x.fio") == (
        {},
        [("a", {"bs": "4k"})],
        [],
    )


@pytest.mark.parametrize("shell", ["|", ">", "2>&1", "&&"])
def test_an_option_before_the_shell_takes_no_value_from_it(shell: str) -> None:
    assert _jobs(f"$ fio --name=a --direct {shell} tee")[1] == [("a", {"direct": "1"})]


def test_getopt_takes_the_next_word_as_a_value_up_to_the_last_one() -> None:
    assert _jobs("$ fio --name a --rw randread") == ({}, [("a", {"rw": "randread"})], [])
    # An option followed by another option has no value: fio sets it.
    assert _jobs("$ fio --name=a --direct --rw=read")[1] == [("a", {"direct": "1", "rw": "read"})]
    # A flag never takes the next word.
    assert _jobs("$ fio --name=a --time_based x.fio") == (
        {},
        [("a", {"time_based": "1"})],
        ["x.fio"],
    )


def test_job_files_and_options_in_any_order() -> None:
    assert _jobs("$ fio one.fio two.fio --name=x --bs=4k") == (
        {},
        [("x", {"bs": "4k"})],
        ["one.fio", "two.fio"],
    )
    # What is not an option name is passed over, not the end of the line.
    assert _jobs("$ fio --name=a --9lives=1 --bs=4k")[1] == [("a", {"bs": "4k"})]


def test_a_command_line_that_names_a_job_file_is_not_all_the_job_was_given() -> None:
    command = textparams.fio_command("$ fio job.fio --name=a --bs=4k")
    assert command is not None
    found = command.job("a")
    assert found is not None and (found.effective, found.complete) == ({"bs": "4k"}, False)
    alone = textparams.fio_command("$ fio --name=a --bs=4k")
    assert alone is not None
    found = alone.job("a")
    assert found is not None
    assert (found.where, found.complete) == ("the fio command line", True)
    assert alone.job("b") is None


# -- the job header line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bs", "expected"),
    [
        ("(R) 4095PiB-4095PiB, (W) 4095PiB-4095PiB, (T) 4095PiB-4095PiB", str(4095 << 50)),
        ("(R) 4096PiB-4096PiB, (W) 4096PiB-4096PiB, (T) 4096PiB-4096PiB", None),  # 2^62
        ("(R) 0.3KiB-0.3KiB, (W) 0.3KiB-0.3KiB, (T) 0.3KiB-0.3KiB", None),  # not whole bytes
        ("4K-4K/4K-4K/4K-4K", "4096"),
        ("4K-4K/8K-8K/4K-4K", None),
    ],
)
def test_a_header_block_size_is_a_whole_number_of_bytes_under_2_to_the_62(
    bs: str, expected: str | None
) -> None:
    assert (
        textparams.header_options(f"rw=read, bs={bs}, ioengine=psync, iodepth=1").get("bs")
        == expected
    )
    # fio prints rw first, but the size is read wherever it stands.
    assert textparams.header_options(f"bs={bs}").get("bs") == expected


# -- a job file shown with cat ------------------------------------------------------------------


def test_a_job_file_line_of_up_to_1024_characters_is_read() -> None:
    padding = " " * (1024 - len("bs=8k"))
    assert textparams.ini_line("bs=8k" + padding)
    assert not textparams.ini_line("bs=8k" + padding + " ")


def _seqwrite_shown(job_file: str) -> str:
    output = (RECORDED / "text-normal-only-seqwrite.out").read_text()
    return f"$ cat job.fio\n{job_file}$ fio job.fio\n{output}"


def test_a_job_file_shown_ends_at_the_first_line_a_job_file_cannot_hold() -> None:
    meta = json.loads((RECORDED / "text-normal-only-seqwrite.meta.json").read_text())
    job_file = meta["job_files"]["job.fio"]
    assert "[seqwrite]" in job_file and "iodepth=2" in job_file
    # A comment, a blank line and a ';' comment are part of it; a line of prose ends it.
    shown = job_file.replace("[seqwrite]", "# the job\n\n; ours\n[seqwrite]")
    (result,) = interpret_fio_output(_seqwrite_shown(shown), "x.txt").results
    assert result.params["iodepth"] == 2
    ended = job_file.replace("iodepth=2", "this is (not) an option line\niodepth=16")
    (result,) = interpret_fio_output(_seqwrite_shown(ended), "x.txt").results
    assert result.params["iodepth"] != 16


def test_a_job_file_s_comments_and_blank_lines_set_nothing() -> None:
    jobs = textparams.job_file(["[a]", "", "# bs=8k", "; bs=16k", "  ", "rw=read"])
    assert jobs["a"].effective == {"rw": "read"}
    assert jobs["a"].where == "the job file shown with it"
    # Options before any section belong to no job.
    assert textparams.job_file(["bs=8k", "[a]", "rw=read"])["a"].effective == {"rw": "read"}


# -- iobench's description -----------------------------------------------------------------------


def test_the_description_iobench_writes_gives_the_options() -> None:
    found = textparams.described("iobench workload: rw=randread bs=4096 iodepth=1 runtime=1ms")
    assert found is not None
    assert found.effective == {"rw": "randread", "bs": "4096", "iodepth": "1", "runtime": "1ms"}
    assert found.shared == {}
    assert found.where == "the job's description, where iobench's suites export states them"


@pytest.mark.parametrize(
    "description",
    [
        None,
        "my workload: rw=read",
        "iobench workload:rw=read",  # not as iobench writes it
        "iobench workload: rw=read and more",  # a word that is no option
        "iobench workload: rw=read  bs=4k",  # an empty word
        "iobench workload: ",
        "xiobench workload: rw=read",
    ],
)
def test_a_description_iobench_did_not_write_gives_nothing(description: str | None) -> None:
    assert textparams.described(description) is None


def test_a_long_description_is_read_up_to_its_4096th_character() -> None:
    head = "iobench workload: " + " ".join(f"o{i}=" + "1" * 150 for i in range(26))
    last = "z=" + "7" * (4096 - len(head) - 3)
    description = f"{head} {last}"
    assert len(description) == 4096 and len(last) < 200
    found = textparams.described(description)
    assert found is not None and found.own["z"] == last[2:] and len(found.own) == 27
    found = textparams.described(description + "8")  # the 4097th character is left out
    assert found is not None and found.own["z"] == last[2:]


# Where fio is on the line: a path to it, wrappers with their flags, and what is not fio.
@pytest.mark.parametrize(
    "line",
    [
        "/usr/bin/fio --name=a --rw=read",
        "$ sudo -E fio --name=a --rw=read",
        "[root@h ~]# nice --adjustment=5 /opt/fio/bin/fio --name=a --rw=read",
    ],
)
def test_fio_is_found_by_its_path_and_after_wrappers_and_their_flags(line: str) -> None:
    assert _jobs(line)[1] == [("a", {"rw": "read"})]


@pytest.mark.parametrize(
    "line",
    [
        "echo sudo fio --name=a --rw=read",  # a wrapper after a word that is none
        "$ echo fio --name=a --rw=read",  # after the prompt, a word that is no wrapper
        "[root@h ~]# grep -r fio --name=a",
        "a b c d e f g h i j k l m n o p fio --name=a",  # fio as the 17th word
        "sudo " * 16 + "fio --name=a --rw=read",
        "fio",
        "/usr/bin/fiox --name=a",
    ],
)
def test_a_line_where_fio_is_no_command_run_gives_no_options(line: str) -> None:
    assert textparams.fio_command(line) is None


def test_fio_as_the_16th_word_after_wrappers_is_read() -> None:
    assert _jobs("sudo " * 15 + "fio --name=a --rw=read")[1] == [("a", {"rw": "read"})]


def test_a_lone_option_after_fio_is_read() -> None:
    assert _jobs("fio --rw=read") == ({"rw": "read"}, [], [])


def test_a_command_line_of_4096_characters_is_read_and_a_longer_one_is_not() -> None:
    head = "fio --name=a --rw=read --description="
    line = head + "x" * (textparams.MAX_COMMAND_CHARS - len(head))
    assert len(line) == 4096
    assert _jobs(line)[1][0][1]["rw"] == "read"
    assert textparams.fio_command(line + "x") is None


def test_a_command_line_of_400_arguments_is_read_and_one_of_401_is_not() -> None:
    line = "fio --name=a" + " --x=1" * (textparams.MAX_ARGS - 1)
    assert _jobs(line)[1] == [("a", {"x": "1"})]
    assert textparams.fio_command(line + " --x=1") is None


def test_a_quoted_value_is_read_as_the_shell_reads_it() -> None:
    # The shell's quotes, an escaped blank and a comment: all of them on one line.
    line = 'fio --name=a --description="it\'s" --rw=read \\  # --rw=write'
    jobs = _jobs(line)[1]
    assert jobs[0][1]["description"] == "it's"
    assert jobs[0][1]["rw"] == "read"


def test_a_comment_on_the_command_line_sets_nothing() -> None:
    assert _jobs("$ fio --name=a --rw=read # then --rw=write x.fio") == (
        {},
        [("a", {"rw": "read"})],
        [],
    )


def test_the_job_named_fio_is_read_after_the_fio_that_runs_it() -> None:
    _, jobs, _ = _jobs("fio --name=fio --description='two words'")
    assert jobs == [("fio", {"description": "two words"})]


def test_an_unclosed_quote_leaves_the_words_as_they_are() -> None:
    _, jobs, _ = _jobs('fio --name=a --description="unclosed --rw=read')
    assert jobs == [("a", {"description": '"unclosed', "rw": "read"})]


def test_a_section_line_of_256_characters_is_one_and_a_longer_is_not() -> None:
    line = "[" + "a" * 200 + "]"
    line += " " * (256 - len(line))
    assert textparams.is_section_line(line)
    assert not textparams.is_section_line(line + " ")


@pytest.mark.parametrize(
    "line", ["", "   ", "# rw = write, and more", "; a note", "[job]", "bs=4k"]
)
def test_blank_lines_comments_sections_and_options_are_job_file_lines(line: str) -> None:
    assert textparams.ini_line(line)


def test_of_two_fio_command_lines_neither_gives_a_job_s_options() -> None:
    lines = ["$ fio --name=a --rw=read", "$ fio --name=a --rw=write", "$ fio --name=a --rw=trim"]
    assert textparams.options_shown(lines)("a") is None
    # The job file shown beside them still does.
    of = textparams.options_shown([*lines, "[a]", "rw=randread"])
    found = of("a")
    assert found is not None and found.effective == {"rw": "randread"}
    # One command line gives them.
    one = textparams.options_shown(lines[:1])("a")
    assert one is not None and one.effective == {"rw": "read"}
