"""fio's normal output as people paste it into READMEs and tickets: the parameters the text
states are read, wherever the text states them (issue 23, point 9).

The outputs are real: fio 3.33 runs from a command line alone, recorded by
scripts/record-fio-outputs (``text-cmdline-*``, their argv in the meta files). Each
paste here is made from one of them as a README shows it: the command line (the meta's
argv, as typed) above the output with a code fence, blank lines, a prompt or a label
between, or the result lines alone; tests/data/fio-outputs/recorded/SOURCES.md says so.
Every parameter read must be the one the run had, as fio's JSON of the same run echoes
it. No fio runs here.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from iobench.importer import interpret_fio_output
from iobench.records import ImportedRun
from test_import_text import RECORDED, normal_part

GROUPED = "text-cmdline-randread-numjobs4-gr"  # libaio randread 4k QD8 x 4, group_reporting
CLONES = "text-cmdline-write-numjobs2-defaults"  # write 64k x 2 jobs, psync/QD1/buffered


def command(name: str) -> str:
    """The recorded run's fio command line as typed (without the recording's --output)."""
    argv = json.loads((RECORDED / f"{name}.meta.json").read_text())["argv"]
    return "fio " + shlex.join(a for a in argv[1:] if not a.startswith("--output"))


def output(name: str, *, results_only: bool = False) -> str:
    """fio's normal output of the run; ``results_only``: from its first result line on
    (no header line, no version line), as pasted under "Results"."""
    text = normal_part(RECORDED / f"{name}.out")
    if results_only:
        lines = text.splitlines()
        text = "\n".join(lines[next(i for i, x in enumerate(lines) if "(groupid=" in x) :])
    return text + "\n"


def imported(text: str, tmp_path: Path) -> ImportedRun:
    path = tmp_path / "README.md"
    path.write_text(text)
    return interpret_fio_output(text, str(path))


def params(run: ImportedRun) -> dict[str, Any]:
    (result,) = run.results
    return {k: v for k, v in result.params.items() if k != "options"}


def where(run: ImportedRun) -> str:
    (note,) = [w for w in run.warnings if w["id"] == "text-parameters"]
    return str(note["message"])


GROUPED_PARAMS = {
    "rw": "randread", "bs": 4096, "iodepth": 8, "numjobs": 4, "ioengine": "libaio",
    "direct": True, "runtime_s": 1.0, "ramp_s": 0.0, "size": 8 << 20, "rwmixread": None,
}  # fmt: skip
CLONES_PARAMS = {
    "rw": "write", "bs": 65536, "iodepth": 1, "numjobs": 2, "ioengine": "psync",
    "direct": False, "runtime_s": 1.0, "ramp_s": 0.0, "size": 4 << 20, "rwmixread": None,
}  # fmt: skip

# (id, how the command line and the output are pasted); {cmd} and {out} are filled in.
PASTES = [
    ("fence-blank-fence", "Run it:\n\n```sh\n$ {cmd}\n```\n\n```\n{out}```\n"),
    ("fence-label", "```\n$ {cmd}\n```\n\nOutput:\n\n```text\n{out}```\n"),
    ("root-prompt-then-bare-prompt", "# {cmd}\n#\n{out}"),
    ("bracket-prompt-blank-lines", "[root@node1 ~]# {cmd}\n\n\n{out}"),
    ("tilde-fence", "~~~\nuser@host:~$ sudo {cmd}\n~~~\n\n~~~\n{out}~~~\n"),
    ("html-pre", "<pre>\n$ {cmd}\n</pre>\n<pre>\n{out}</pre>\n"),
    ("continued-lines", "```\n$ {cont}\n```\n\n```\n{out}```\n"),
]


def _continued(cmd: str) -> str:
    """The command as a README breaks a long one: two options a line, `` \\`` at the end."""
    words = shlex.split(cmd)
    lines = [" ".join(shlex.quote(w) for w in words[i : i + 3]) for i in range(0, len(words), 3)]
    return " \\\n    ".join(lines)


@pytest.mark.parametrize("results_only", [False, True], ids=["with-header", "results-only"])
@pytest.mark.parametrize("name", [GROUPED, CLONES])
@pytest.mark.parametrize("paste", [p for _, p in PASTES], ids=[i for i, _ in PASTES])
def test_a_command_line_a_fence_blank_lines_or_a_prompt_away_still_counts(
    tmp_path: Path, paste: str, name: str, results_only: bool
) -> None:
    cmd = command(name)
    text = paste.format(cmd=cmd, cont=_continued(cmd), out=output(name, results_only=results_only))
    run = imported(text, tmp_path)
    assert params(run) == (GROUPED_PARAMS if name == GROUPED else CLONES_PARAMS)
    assert where(run).startswith("the jobs' parameters were read from the fio command line")


def test_prose_between_the_command_and_the_output_is_another_story(tmp_path: Path) -> None:
    """A sentence between them may quote a command for another machine's output: the
    command does not count; what fio printed of the job still does (no direct, no size)."""
    text = (
        f"$ {command(GROUPED)}\n\nOn the other cluster the same job gave these numbers, "
        f"which we will look at later:\n\n{output(GROUPED)}"
    )
    run = imported(text, tmp_path)
    assert params(run) == {
        **GROUPED_PARAMS, "direct": None, "runtime_s": None, "ramp_s": None, "size": None
    }  # fmt: skip
    assert "fio's job header line" in where(run)


@pytest.mark.parametrize(
    ("name", "stated"),
    [
        # group_reporting: one block, "jobs=4"; iodepth from "latency : ... depth=8"
        (GROUPED, {"iodepth": 8, "numjobs": 4}),
        # no group_reporting: two blocks of the job, each "jobs=1"
        (CLONES, {"iodepth": 1, "numjobs": 2}),
    ],
)
def test_result_lines_alone_state_the_jobs_and_the_depth(
    tmp_path: Path, name: str, stated: dict[str, int]
) -> None:
    """No command line, no header line: fio's result lines still say how many jobs ran
    (``jobs=N``, or the job's blocks) and at what depth; nothing else is made up."""
    run = imported(output(name, results_only=True), tmp_path)
    assert {k: v for k, v in params(run).items() if v is not None} == stated
    assert "fio's result lines (iodepth, numjobs)" in where(run)
    assert not [w for w in run.warnings if w["id"] == "fio-defaults"]


def test_a_header_line_states_what_it_shows_and_no_default_is_assumed(tmp_path: Path) -> None:
    """fio's header line with `...` under it, no command line: rw, bs, ioengine, iodepth
    and numjobs are the run's; direct, which no line of fio's text states, stays null."""
    run = imported(output(CLONES), tmp_path)
    assert params(run) == {
        **CLONES_PARAMS, "direct": None, "runtime_s": None, "ramp_s": None, "size": None
    }  # fmt: skip


def test_the_json_of_the_same_run_gives_the_same_parameters(tmp_path: Path) -> None:
    """fio's JSON echo of the command-line run, with fio's defaults for what it leaves out
    (ioengine, iodepth, direct of CLONES), says the same as the pasted text."""
    for name, expected in ((GROUPED, GROUPED_PARAMS), (CLONES, CLONES_PARAMS)):
        text = (RECORDED / f"{name}.out").read_text()
        run = interpret_fio_output(text, str(RECORDED / f"{name}.out"))
        assert params(run) == expected
        defaults = run.suite_def.workloads[0]["fio_defaults"]  # type: ignore[index]
        if name == CLONES:
            assert defaults == {"iodepth": "1", "ioengine": "psync", "direct": "0",
                                "ramp_time": "0"}  # fmt: skip
