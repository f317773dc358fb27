"""`iobench suites export` and `doctor --fio-jobfile`: job files that plain fio runs as they
are. Every built-in suite is parsed by real fio, one is run by it; the file is written
whole or not at all, never over a file without --force nor through a link; strings from a
suite file reach fio only where it cannot take them for options."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench import __version__
from iobench.errors import UserError
from iobench.model import Suite, Workload
from iobench.suites import builtin_names, fit_to_cpus, load_builtin, load_suite
from iobench.suites.suitefile import Export, check_plain, suite_jobfile
from iobench.targets import Reach
from scratch import MiB, Scratch, sha256_of


def export(cli: Cli, *args: str) -> tuple[int, str, str]:
    code, out, err = cli("suites", "export", *args)
    assert "Traceback" not in err
    return code, out, err


def said(text: str) -> str:
    """The header's comments as one line of text (unwrapped)."""
    return " ".join(line.lstrip("#").strip() for line in text.splitlines() if line[:1] == "#")


def warning_block(text: str) -> str:
    """The text between the header's two rows of '!', each of its lines led by '# !!! '."""
    block = text.split("# " + "!" * 64 + "\n")[1].splitlines()
    assert all(line.startswith("# !!! ") for line in block)
    return " ".join(line[6:] for line in block)


def beside_filename(text: str) -> str:
    """The comment just above [global]'s filename=, unwrapped."""
    return said(text.split("\n[global]\n", 1)[1].split("\nfilename=", 1)[0])


def sections(text: str) -> list[str]:
    return re.findall(r"^\[(.*)\]$", text, re.M)


def options(text: str, section: str) -> dict[str, str]:
    """The ``key=value`` lines of one section."""
    body = text.split(f"\n[{section}]\n", 1)[1].split("\n[", 1)[0]
    return dict(line.split("=", 1) for line in body.splitlines() if "=" in line and line[0] != "#")


def parse_only(fio: str, job: Path, **env: str) -> str:
    """``fio --parse-only --showcmd``: the job file as fio reads it, one option a word."""
    proc = subprocess.run(
        [fio, "--parse-only", "--showcmd", str(job)], capture_output=True, text=True,
        timeout=30, check=False, env={**os.environ, **env},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_suite_exports_to_a_file_plain_fio_parses(
    cli: Cli, real_fio: str, tmp_path: Path, one_cpu: int, name: str
) -> None:
    """The suite's steps in its order, each a section with stonewall, fitted to this
    host's one CPU as `run` runs them (the header and each section say how); with
    --unfitted the suite's own numjobs, and the header says what `run` runs instead."""
    out = tmp_path / f"{name}.fio"
    code, stdout, err = export(cli, name, "-o", str(out))
    assert (code, stdout) == (0, ""), err
    text = out.read_text()
    suite = load_builtin(name)
    steps = ["iobench:layout", *(w.name for w in suite.workloads)]
    assert sections(text) == ["global", *steps]
    assert f"wrote {out} ({len(steps)} fio jobs, one after another); run it: fio {out}" in err
    assert text.startswith(f"# iobench {__version__}: the {name} suite as a job file for plain fio")
    assert "\n# source: a built-in suite; exported 20" in text
    assert f"\n# run it: fio {out}\n" in text
    assert options(text, "global")["filename"] == f"iobench-{name}.dat"
    assert "directory" not in options(text, "global")
    fitted = [w for w in suite.workloads if w.numjobs > 1 and w.ioengine == "libaio"]
    for w in suite.workloads:
        job = options(text, w.name)
        depth, jobs = (w.iodepth * w.numjobs, 1) if w in fitted else (w.iodepth, w.numjobs)
        assert (job["rw"], job["bs"]) == (w.rw, str(w.bs))
        assert (job["iodepth"], job["numjobs"]) == (str(depth), str(jobs))
        # fio's text output prints a description: the section's options, for `import`
        assert job["description"] == "iobench workload: " + " ".join(
            f"{k}={v}" for k, v in job.items() if k != "description"
        )
    assert text.count("\nstonewall\n") == len(steps)
    for w in fitted:
        assert (
            f"{w.name} as 1 job x iodepth {w.iodepth * w.numjobs} (the suite: "
            f"{w.numjobs} jobs x iodepth {w.iodepth})"
        ) in said(text)
        assert f"1 job x iodepth {w.iodepth * w.numjobs} (fitted to 1 CPU" in said(text)
    fitted_to = "fitted to the host that exported it (1 CPU) as `iobench run` runs it there"
    assert (fitted_to in said(text)) == bool(fitted)
    assert ("as `iobench run` runs it on the host that exported it (1 CPU): as defined" in
            said(text)) == (not fitted)  # fmt: skip
    shown = parse_only(real_fio, out)
    assert shown.count("--name=") == len(steps) and "--stonewall" in shown
    code, _, err = export(cli, name, "--unfitted", "-o", str(out), "--force")
    assert code == 0, err
    text = out.read_text()
    for w in suite.workloads:
        job = options(text, w.name)
        assert (job["iodepth"], job["numjobs"]) == (str(w.iodepth), str(w.numjobs))
    assert ("--unfitted" in said(text)) and (fitted_to not in said(text))
    for w in fitted:
        assert f"{w.name} as 1 job x iodepth {w.iodepth * w.numjobs}" in said(text)
    shown = parse_only(real_fio, out)
    assert shown.count("--name=") == len(steps) and "--stonewall" in shown


@pytest.mark.fio
def test_plain_fio_runs_an_exported_suite(cli: Cli, real_fio: str, tmp_path: Path) -> None:
    """The quick suite, shortened, on a directory whose name fio must have escaped: plain
    fio runs one job per step, each with the exported shape, in the exported order."""
    target = tmp_path / "vol: a"
    target.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    job = tmp_path / "quick.fio"
    short = ("--runtime", "200ms", "--ramp", "0", "--size", "2M")
    code, _, err = export(cli, "quick", "--target", str(target), *short, "-o", str(job))
    assert code == 0, err
    text = job.read_text()
    assert options(text, "global")["directory"] == str(target).replace(":", "\\:")
    assert "# as `iobench run` runs it with --ramp, --runtime, --size given" in text
    code, stdout, err = export(cli, "quick", "--target", str(target), *short)
    assert code == 0 and err == ""
    assert stdout.split("\n[global]\n")[1] == text.split("\n[global]\n")[1]
    assert "\n# run it: fio FILE.fio\n" in stdout
    proc = subprocess.run(
        [real_fio, "--output-format=json", "--output=out.json", str(job)],
        cwd=work, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jobs = json.loads((work / "out.json").read_text())["jobs"]
    suite = fit_to_cpus(load_builtin("quick"), len(os.sched_getaffinity(0)))  # as `run` here
    assert [j["jobname"] for j in jobs] == ["iobench:layout", *(w.name for w in suite.workloads)]
    assert [j["groupid"] for j in jobs] == list(range(len(jobs)))  # one after another
    assert jobs[0]["write"]["io_bytes"] == 2 * MiB
    for j, w in zip(jobs[1:], suite.workloads, strict=True):
        opts = j["job options"]
        assert (opts["rw"], opts["bs"], opts["iodepth"], opts["numjobs"]) == (
            w.rw, str(w.bs), str(w.iodepth), str(w.numjobs)
        )  # fmt: skip
        assert j["read" if "read" in w.rw else "write"]["io_bytes"] > 0
    # fio's test file is where the header says, and only there.
    assert [p.name for p in target.iterdir()] == ["iobench-quick.dat"]
    assert sorted(p.name for p in work.iterdir()) == ["out.json"]


@pytest.mark.parametrize("name", builtin_names())
def test_doctor_fio_jobfile_of_every_builtin_suite_is_parsed_by_plain_fio(
    cli: Cli, real_fio: str, tmp_path: Path, name: str
) -> None:
    target = tmp_path / "t"
    target.mkdir()
    plan = tmp_path / "plan.fio"
    code, _, err = cli(
        "doctor", str(target), "-s", name, "--size", "4M", "--fio-jobfile", str(plan)
    )
    assert code == 0, err
    text = plan.read_text()
    assert parse_only(real_fio, plan).count("--name=") == len(load_builtin(name).workloads) + 1
    assert text.startswith(f"; the steps `iobench run` would run with the {name} suite on ")
    assert all(len(line.encode()) < 1024 for line in text.splitlines())
    assert list(target.iterdir()) == []
    # Read back as a suite: the workloads, and no layout workload that writes.
    back = [w.name for w in load_suite(str(plan)).workloads]
    assert back == [w.name for w in load_builtin(name).workloads]


# -- the file written: new, whole, never through a link -------------------------------------------


def test_an_existing_file_is_replaced_only_with_force(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "quick.fio"
    out.write_text("mine\n")
    out.chmod(0o640)
    code, stdout, err = export(cli, "quick", "-o", str(out))
    assert (code, stdout) == (2, "")
    assert f"{out} exists" in err and "pass --force to replace it" in err
    assert out.read_text() == "mine\n"
    code, _, err = export(cli, "quick", "-o", str(out), "--force")
    assert code == 0, err
    assert out.read_text().startswith("# iobench ")
    assert out.stat().st_mode & 0o777 == 0o640, "a replaced file keeps its permissions"
    assert [p.name for p in tmp_path.iterdir()] == ["quick.fio"], "no temporary file is left"


@pytest.mark.parametrize("force", [False, True])
def test_a_link_at_the_destination_is_never_followed_nor_replaced(
    cli: Cli, tmp_path: Path, force: bool
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link, dangling = tmp_path / "link.fio", tmp_path / "dangling.fio"
    link.symlink_to(victim)
    dangling.symlink_to(tmp_path / "created-through-the-link")
    for dest in (link, dangling):
        code, stdout, err = export(cli, "quick", "-o", str(dest), *(["--force"] if force else []))
        assert (code, stdout) == (2, "")
        assert f"cannot write {dest}: it is a symbolic link" in err
        assert dest.is_symlink()
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.fio", "link.fio", "victim"]


def test_what_is_not_a_file_is_refused(cli: Cli, tmp_path: Path) -> None:
    code, _, err = export(cli, "quick", "-o", str(tmp_path), "--force")
    assert code == 2 and "it is a directory" in err
    code, _, err = export(cli, "quick", "-o", str(tmp_path / "missing" / "q.fio"))
    assert code == 2 and f"cannot write {tmp_path / 'missing' / 'q.fio'}" in err
    code, _, err = export(cli, "quick", "-o", "/dev/null")
    assert code == 2 and "cannot write /dev/null: it is not a file" in err


def test_a_name_that_appears_while_iobench_writes_is_not_overwritten(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process creates the file (or plants a link) between iobench's look and its
    rename: without --force the file stays theirs; with it, a link is replaced, its target
    never written."""
    import iobench.output

    out = tmp_path / "q.fio"
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    real_write = iobench.output._write_all

    def racing(fd: int, data: bytes, plant: Any) -> None:
        plant()
        real_write(fd, data)

    monkeypatch.setattr(
        iobench.output,
        "_write_all",
        lambda fd, data: racing(fd, data, lambda: out.write_text("theirs\n")),
    )
    code, _, err = export(cli, "quick", "-o", str(out))
    assert code == 2 and f"{out} exists (it appeared while iobench wrote)" in err
    assert out.read_text() == "theirs\n"
    out.unlink()
    monkeypatch.setattr(
        iobench.output,
        "_write_all",
        lambda fd, data: racing(fd, data, lambda: out.symlink_to(victim)),
    )
    code, _, err = export(cli, "quick", "-o", str(out), "--force")
    assert code == 0, err
    assert not out.is_symlink() and out.read_text().startswith("# iobench ")
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.fio", "victim"]


# -- targets: as `run` takes them ------------------------------------------------------------

WRITES = """\
name = "w"
description = "reads and writes"
[defaults]
bs = "4k"
iodepth = 1
numjobs = 1
size = "1M"
[[workload]]
name = "r"
rw = "randread"
[[workload]]
name = "w"
rw = "randwrite"
"""


def test_an_existing_file_is_written_only_with_destructive_and_the_file_says_so(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    data = tmp_path / "data.bin"
    data.write_bytes(b"x" * 2 * MiB)
    suite = tmp_path / "w.toml"
    suite.write_text(WRITES)
    out = tmp_path / "w.fio"
    code, _, err = export(cli, str(suite), "--target", str(data), "-o", str(out))
    assert code == 3 and "its contents would be overwritten" in err and "--destructive" in err
    assert not out.exists()
    code, _, err = export(cli, str(suite), "--target", str(data), "--destructive", "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    warning = f'this job file WRITES TO the file "{data}" (w): it OVERWRITES ITS CONTENTS'
    assert warning_block(text).startswith(f"WARNING: {warning}. iobench exported it with")
    assert beside_filename(text) == f"!!! {warning} !!!"
    assert options(text, "global")["filename"] == str(data)
    assert "iobench:layout" not in sections(text), "nothing is laid out over the user's file"
    # Reads only: the command it suggests passes --readonly, as iobench does.
    reads = tmp_path / "r.toml"
    reads.write_text(WRITES.split('[[workload]]\nname = "w"')[0])
    code, stdout, err = export(cli, str(reads), "--target", str(data))
    assert code == 0, err
    assert "\n# run it: fio --readonly FILE.fio\n" in stdout and "WARNING" not in stdout
    assert data.read_bytes() == b"x" * 2 * MiB
    job = tmp_path / "r.fio"
    job.write_text(stdout)
    parse_only(real_fio, job)


def test_a_path_fio_cannot_take_is_refused(cli: Cli, tmp_path: Path) -> None:
    for bad in ("a;b", "a$HOME", "a#b", "a\\b"):
        target = tmp_path / bad
        target.mkdir()
        code, stdout, err = export(cli, "quick", "--target", str(target))
        assert (code, stdout) == (2, ""), err
        assert "fio cannot take this path in a job file" in err


@pytest.mark.root
def test_a_device_is_written_only_as_run_would_and_with_a_loud_warning(
    cli: Cli, real_fio: str, scratch: Scratch, tmp_path: Path
) -> None:
    dev = scratch.loop(scratch.image(8 * MiB))
    before = sha256_of(dev)
    out = tmp_path / "dev.fio"
    code, _, err = export(cli, "randwrite-4x32", "--target", dev, "-o", str(out))
    assert code == 3 and not out.exists()
    code, _, err = export(cli, "randwrite-4x32", "--target", dev, "--destructive", "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    warning = (
        f'this job file WRITES TO the block device "{dev}" (randwrite-4k-qd32x4): it DESTROYS '
        "ALL DATA ON IT"
    )
    assert warning_block(text).startswith(f"WARNING: {warning}. iobench exported it with")
    assert beside_filename(text) == f"!!! {warning} !!!"
    assert options(text, "global")["filename"] == dev
    assert options(text, "randwrite-4k-qd32x4")["size"] == str(8 * MiB), "capped at its size"
    parse_only(real_fio, out)
    scratch.mkfs(dev)
    code, _, err = export(cli, "randwrite-4x32", "--target", dev, "--destructive", "-o", str(out))
    assert code == 3 and "--overwrite-signatures" in err
    assert sha256_of(dev) != before  # mkfs wrote it; export did not:
    after = sha256_of(dev)
    code, out_text, err = export(
        cli, "randwrite-4x32", "--target", dev, "--destructive", "--overwrite-signatures"
    )
    assert code == 0 and f"filename={dev}\n" in out_text, err
    assert sha256_of(dev) == after


# -- strings from outside -----------------------------------------------------------------------

HOSTILE = "\n[evil]\nexec_prerun=touch PWNED\ninclude /etc/passwd ${X} $mb_memory (1+2) ; # \\"


def test_hostile_strings_stay_in_comments(real_fio: str, tmp_path: Path) -> None:
    """A suite's name, description and source and a workload's name, whatever they hold,
    reach fio only as comments: nothing becomes an option, a section or an include, even
    past the 8 KiB at which fio cuts a line, and with $X set to a job file of its own."""
    long = "A" * 8190 + "exec_prerun=touch PWNED"
    suite = Suite(
        name="evil\n[evil]",
        description=f"{HOSTILE} \u2028exec_prerun=touch PWNED \x1b[31m\x00 {long}",
        workloads=(
            Workload(name="global", rw="randread", bs=4096, iodepth=1, numjobs=1, size=MiB),
            Workload(name="global-x", rw="randread", bs=4096, iodepth=1, numjobs=1, size=MiB),
            Workload(name="x]\n[y", rw="randread", bs=4096, iodepth=1, numjobs=1, size=MiB),
            Workload(name="x___y", rw="randread", bs=4096, iodepth=1, numjobs=1, size=MiB),
        ),
        source=str(tmp_path / f"s{HOSTILE}.toml"),
    )
    text = suite_jobfile(
        Export(suite, None, None, False, (), 2, "now", file_name=f"o{HOSTILE}.fio")
    )
    names = ["iobench:layout", "job-global", "job-global-x", "x___y", "x___y.2"]
    assert sections(text) == ["global", *names]
    assert not [line for line in text.splitlines() if len(line.encode()) > 1000]
    job = tmp_path / "evil.fio"
    job.write_text(text)
    shown = parse_only(real_fio, job, X="\n[evil]\nexec_prerun=touch PWNED")
    assert "exec_prerun" not in shown and "include" not in shown and "PWNED" not in shown
    words = shown.split()
    # Each section's name, then the name= of a workload whose section cannot bear its name.
    named = ["iobench:layout", "job-global", "global", "job-global-x", "global-x", "x___y"]
    named += ["x___y.2", "x___y"]
    assert [w.removeprefix("--name=") for w in words if w.startswith("--name=")] == named
    assert "--filename=iobench-evil__evil_.dat" in words


def test_hostile_description_from_a_suite_file(cli: Cli, real_fio: str, tmp_path: Path) -> None:
    folder = tmp_path / "a\nexec_prerun=touch PWNED"
    folder.mkdir()
    suite = folder / "s.toml"
    suite.write_text(
        WRITES.replace('"reads and writes"', json.dumps(HOSTILE.replace("${X}", "$X $ncpus")))
    )
    job = tmp_path / "s.fio"
    code, _, err = export(cli, str(suite), "-o", str(job))
    assert code == 0, err
    text = job.read_text()
    assert f"source: the suite file {json.dumps(str(suite))}; exported" in said(text)
    shown = parse_only(real_fio, job, X="\nexec_prerun=touch PWNED")
    assert "exec_prerun" not in shown and "include" not in shown and "evil" not in shown
    assert "PWNED" not in shown


@pytest.mark.parametrize(
    "value", ["$mb_memory", "${X}", "(1+2)", "1;exec_prerun=x", "1 # c", "1\nexec_prerun=x", "a\\"]
)
def test_an_option_value_fio_would_expand_or_cut_is_refused(value: str) -> None:
    """The last check over the whole file, whatever a future option lets through."""
    w = Workload(name="w", rw="read", bs=4096, iodepth=1, numjobs=1, options=(("rate", value),))
    suite = Suite(name="s", description="d", workloads=(w,), source="s.toml")
    with pytest.raises(UserError, match=r"cannot export: line \d+ of the job file"):
        suite_jobfile(Export(suite, None, None, False, (), 1, "now", None))
    for bad in ("include=/etc/passwd", "include /etc/passwd", "[global]", "exec_prerun=x"):
        with pytest.raises(UserError, match="cannot export: line 2 "):
            check_plain(f"[global]\n{bad}\n")
    check_plain("[global]\nfilename=a\\:b\n[j]\nrw=read\nstonewall\n# $X ; anything\n")
    ok = dataclasses.replace(w, options=(("rate", "1048576"),))
    assert "\nrate=1048576\n" in suite_jobfile(
        Export(dataclasses.replace(suite, workloads=(ok,)), None, None, False, (), 1, "now", None)
    )


def test_a_workload_named_global_something_is_a_job_in_iobench_own_job_file_too(
    real_fio: str, tmp_path: Path
) -> None:
    """fio takes any section named global... for shared options: [global-test] ran nothing."""
    from iobench.fio.jobfile import build_jobfile

    w = Workload(name="global-test", rw="randread", bs=4096, iodepth=1, numjobs=1, size=MiB)
    job = tmp_path / "step.fio"
    job.write_text(build_jobfile(w, Reach.file("target"), MiB))
    shown = parse_only(real_fio, job)
    assert "--name=job-global-test " in shown and "--rw=randread" in shown


def test_doctor_fio_jobfile_cuts_comments_fio_would_cut(
    cli: Cli, real_fio: str, tmp_path: Path
) -> None:
    """A target path of 4000 characters, named twice in one note of the header: before
    the cut, fio read the note's end past 8 KiB as an option line of its own."""
    target = tmp_path
    while len(str(target)) < 3850:
        target = target / ("exec_prerun=touch PWNED " + "d" * 150)
    target = target / ("d" * (4050 - len(str(target)) - 1))
    target.mkdir(parents=True)
    plan = tmp_path / "plan.fio"
    code, _, err = cli(
        "doctor", str(target), "-s", "quick", "--size", "4M", "--fio-jobfile", str(plan)
    )
    assert code == 0, err
    text = plan.read_text()
    comments = [line for line in text.splitlines() if line.startswith(";")]
    assert max(len(line.encode()) for line in comments) <= 1002
    shown = parse_only(real_fio, plan)
    assert shown.count("--name=") == 7 and "--exec_prerun" not in shown


def _defined(suite: Suite) -> list[dict[str, object]]:
    """What each workload runs, options in any order."""
    out = []
    for w in suite.workloads:
        d = dataclasses.asdict(w)
        d["options"] = sorted(w.options)
        out.append(d)
    return out


@pytest.mark.parametrize("name", builtin_names())
def test_an_exported_suite_reads_back_as_the_same_suite(
    cli: Cli, tmp_path: Path, name: str
) -> None:
    """`suites export` then `--suite FILE.fio`: the workloads `run` runs on this host (a
    built-in suite fitted to its CPUs); with --unfitted, the suite's own. Only notes (the
    target and iobench's own layout and reporting options are left to iobench)."""
    job = tmp_path / f"{name}.fio"
    code, _, err = export(cli, name, "-o", str(job))
    assert code == 0, err
    back = load_suite(str(job))
    assert back.name == name
    here = fit_to_cpus(load_builtin(name), len(os.sched_getaffinity(0)))
    assert _defined(back) == _defined(here)
    said_notes = " ".join(n.message for n in back.notes)
    assert "[iobench:layout]" in said_notes and "filename=" in said_notes
    code, _, err = export(cli, name, "--unfitted", "-o", str(job), "--force")
    assert code == 0, err
    assert _defined(load_suite(str(job))) == _defined(load_builtin(name))


def test_a_user_suite_with_placement_and_mixes_reads_back_the_same(
    cli: Cli, tmp_path: Path
) -> None:
    cpu = min(os.sched_getaffinity(0))
    toml = tmp_path / "mix.toml"
    toml.write_text(
        f"""name = "mix"
description = "a mix"
[defaults]
runtime = "3s"
size = "32M"
[[workload]]
name = "oltp"
rw = "randrw"
rwmixread = 70
bs = "8k"
iodepth = 16
numjobs = 1
cpus_allowed = "{cpu}"
[[workload]]
name = "split"
rw = "randwrite"
bs = "4k"
iodepth = 4
numjobs = 1
bssplit = "4k/50:64k/50"
"""
    )
    job = tmp_path / "mix.fio"
    code, _, err = export(cli, str(toml), "-o", str(job))
    assert code == 0, err
    assert _defined(load_suite(str(job))) == _defined(load_suite(str(toml)))


def test_the_command_lines_in_the_header_stay_whole_however_long_the_path(
    cli: Cli, tmp_path: Path
) -> None:
    """A long directory name (a test's tmp_path under pytest-xdist is one) must not be cut
    across comment lines: the header's commands are copied and pasted whole."""
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "and-another-level-of-it"
    deep.mkdir(parents=True)
    out = deep / "quick.fio"
    code, _, err = export(cli, "quick", "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    assert f"\n# run it: fio {out}\n" in text
    assert f"\n#   fio --output-format=json+ --output=result.json {out}\n" in text
