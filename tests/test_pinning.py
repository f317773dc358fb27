"""CPU placement: cpus_allowed, cpus_allowed_policy and cpumask in suites (checked against
the online CPUs), ``--pin-to-device`` (the cloud-disk guide's pinning to the CPUs of the
device's blk-mq queues), the queues in the context, and doctor's rq_affinity finding."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from iobench.cpus import format_cpu_list, online_cpus, parse_cpu_list, parse_cpumask
from iobench.engine.remote import check_clients_request
from iobench.engine.request import RunRequest
from iobench.errors import ExitCode, SuiteError, UserError
from iobench.jsontext import scan_objects
from iobench.model import Suite, Workload
from iobench.probe import probe_target
from iobench.probe.queues import queue_context
from iobench.store import Store
from iobench.suites import load_builtin, load_suite_file
from iobench.suites.pin import check_jobs, pinning, placed
from scratch import Scratch

SUITE = """\
name = "placed"
description = "CPU placement"
[defaults]
runtime = "1s"
size = "8M"
iodepth = 2
bs = "4k"
rw = "randread"
[[workload]]
name = "w1"
numjobs = {numjobs}
{extra}
"""
EXTRA_LINE = 12  # the line of {extra}


def suite_file(tmp_path: Path, extra: str = "", numjobs: int = 1) -> Path:
    path = tmp_path / "placed.toml"
    path.write_text(SUITE.format(extra=extra, numjobs=numjobs))
    return path


def refused(tmp_path: Path, extra: str) -> str:
    """The message after ``file:line: `` for a suite with ``extra`` in its workload."""
    path = suite_file(tmp_path, extra)
    with pytest.raises(SuiteError) as info:
        load_suite_file(str(path))
    err = info.value
    assert err.exit_code == ExitCode.BAD_INPUT
    assert err.line == EXTRA_LINE, err.message
    return err.message.removeprefix(f"{path}:{EXTRA_LINE}: ")


def online() -> frozenset[int]:
    cpus = online_cpus()
    assert cpus, "/sys/devices/system/cpu/online is readable on Linux"
    return cpus


# -- CPU lists and masks --------------------------------------------------------------------


def test_cpu_lists_and_masks_read_and_write_as_fio_and_the_kernel_do() -> None:
    assert parse_cpu_list("0-3,5") == {0, 1, 2, 3, 5}
    assert parse_cpu_list("0, 1") == {0, 1}  # blk-mq's cpu_list
    assert format_cpu_list({5, 0, 1, 2, 3, 9, 10}) == "0-3,5,9-10"
    assert parse_cpumask("0x6") == parse_cpumask(6) == parse_cpumask("6") == {1, 2}
    for bad in ("", "3-1", "a", "0,,1", "-1", "1-", "8192"):
        with pytest.raises(ValueError):
            parse_cpu_list(bad)
    for mask in (0, 1 << 64, "0x", "0xZZ", "-1", "1e3"):
        with pytest.raises(ValueError):
            parse_cpumask(mask)


# -- suites: the allow-list -----------------------------------------------------------------


def test_cpu_options_naming_online_cpus_are_accepted_and_written_for_fio(tmp_path: Path) -> None:
    cpus = online()
    mask = sum(1 << c for c in cpus if c < 64)
    extra = (
        f'cpus_allowed = "{format_cpu_list(cpus)}"\ncpus_allowed_policy = "split"\ncpumask = {mask}'
    )
    (w,) = load_suite_file(str(suite_file(tmp_path, extra))).workloads
    assert dict(w.options) == {
        "cpus_allowed": format_cpu_list(cpus),
        "cpus_allowed_policy": "split",
        "cpumask": hex(mask),
    }


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ('cpus_allowed = "999"', "names CPU 999, not online on this host (online: "),
        ('cpus_allowed = "0,998-999"', "names CPUs 998-999, not online on this host"),
        ("cpumask = 0x8000000000000000", "names CPU 63, not online on this host"),
        ('cpumask = "18446744073709551616"', "is wider than the 64 bits fio reads"),
        ("cpumask = 0", "is a mask of no CPU"),
        ('cpumask = "0xZZ"', "is not a number in decimal or 0x hexadecimal"),
        ("cpumask = true", "cpumask must be a bit mask of CPUs"),
        ('cpus_allowed = "3-1"', "the range 3-1 runs backwards"),
        ('cpus_allowed = "0-"', "'0-' is not a CPU number or a range"),
        ('cpus_allowed = "0 1"', "cpus_allowed must be a list of CPUs such as 0-3,5"),
        ("cpus_allowed = 1", "cpus_allowed must be a list of CPUs such as 0-3,5"),
        ('cpus_allowed_policy = "spread"', 'cpus_allowed_policy must be "shared"'),
        # hostile: a job section smuggled in, digits that are not ASCII, a huge string
        (r'cpus_allowed = "0\n[evil]\nexec_prerun=id"', "must be a list of CPUs"),
        ('cpus_allowed = "\u0661"', "written with the ASCII digits 0-9"),
        (f'cpus_allowed = "{"0," * 3000}0"', "too long (at most 4096)"),
        (r'cpus_allowed = "\u001b[31m0"', "\\u001b"),
    ],
)
def test_cpu_options_are_refused_with_file_line_and_why(
    tmp_path: Path, extra: str, says: str
) -> None:
    message = refused(tmp_path, extra)
    assert message.startswith('workload "w1": cp'), message
    assert says in message
    assert "\x1b" not in message and "\n" not in message


def test_offline_cpu_error_lists_the_online_cpus(tmp_path: Path) -> None:
    message = refused(tmp_path, 'cpus_allowed = "999"')
    assert message.endswith(f"(online: {format_cpu_list(online())})")


def test_runs_on_fio_servers_refuse_cpus_and_pinning(tmp_path: Path) -> None:
    cpus = format_cpu_list(online())
    suite = load_suite_file(str(suite_file(tmp_path, f'cpus_allowed = "{cpus}"')))
    with pytest.raises(UserError, match="sets cpus_allowed, which does not go with --clients"):
        check_clients_request(RunRequest(targets=("/mnt/shared",), suite=suite))
    policy = load_suite_file(str(suite_file(tmp_path, 'cpus_allowed_policy = "split"')))
    check_clients_request(RunRequest(targets=("/mnt/shared",), suite=policy))  # harmless
    with pytest.raises(UserError, match="--pin-to-device does not go with --clients"):
        check_clients_request(RunRequest(("/mnt/shared",), policy, pin_to_device=True))


# -- the pinning, as the guide's script computes it ---------------------------------------


def queues(*lists: str, rq_affinity: int = 1) -> dict[str, Any]:
    """A probed context whose device has hardware queues with these CPU lists."""
    hw = [{"queue": i, "cpus": cpus, "nr_tags": 1023} for i, cpus in enumerate(lists)]
    device = {"kname": "nvme0n1", "rq_affinity": rq_affinity, "nomerges": 0, "hw_queues": hw}
    return {"queues": {"devices": [device], "note": None}}


def workload(numjobs: int, *options: tuple[str, str]) -> Workload:
    return Workload("w", "randread", 4096, 32, numjobs, options=options)


def test_jobs_go_one_per_queue_first_and_cpu_0_is_left_out_when_there_are_enough() -> None:
    # The guide: cat mq/*/cpu_list | awk '{print $i}' for i = 1, 2, ... then cut -f 2-N+1
    pin = pinning("/dev/nvme0n1", queues("0, 1", "2, 3", "4, 5", "6, 7"), None)
    assert pin.cpus == (0, 2, 4, 6, 1, 3, 5, 7)
    assert dict(placed(workload(1), pin).options) == {
        "cpus_allowed": "2",
        "cpus_allowed_policy": "split",
    }
    assert dict(placed(workload(4), pin).options)["cpus_allowed"] == "1-2,4,6"
    # eight jobs need every CPU: CPU 0 is kept
    assert dict(placed(workload(8), pin).options)["cpus_allowed"] == "0-7"
    usable = pinning("/dev/nvme0n1", queues("0, 1", "2, 3"), frozenset({0, 3}))
    assert usable.cpus == (0, 3)  # only the CPUs fio may run on here


def test_a_suites_own_placement_wins_and_too_many_jobs_are_refused() -> None:
    pin = pinning("/dev/vdb", queues("0, 1"), None)
    own = workload(1, ("cpus_allowed", "0"))
    assert placed(own, pin) == own
    shared = placed(workload(1, ("cpus_allowed_policy", "shared")), pin)
    assert dict(shared.options) == {"cpus_allowed_policy": "shared", "cpus_allowed": "1"}
    suite = Suite("s", "", (workload(3), own), "s.toml")
    with pytest.raises(UserError) as info:
        check_jobs(suite, pin)
    assert "/dev/vdb: w runs 3 jobs, but 2 CPUs (0-1) serve nvme0n1's blk-mq queues" in str(
        info.value
    )
    assert "lower numjobs to 2 or fewer" in (info.value.hint or "")
    check_jobs(Suite("s", "", (own,), "s.toml"), pin)  # its own placement: not counted


def test_targets_without_queues_are_named_in_the_error() -> None:
    tmpfs = {"queues": {"devices": [], "note": "no blk-mq queues: tmpfs is RAM-backed"}}
    with pytest.raises(UserError, match="/dev/shm/x has nothing to pin to: no blk-mq queues"):
        pinning("/dev/shm/x", tmpfs, None)
    with pytest.raises(UserError, match=r"none of the CPUs of nvme0n1's blk-mq queues \(4-5\)"):
        pinning("/dev/nvme0n1", queues("4, 5"), frozenset({0, 1}))


def fake_sysfs(root: Path, kname: str, *cpu_lists: str, rq_affinity: str = "1") -> None:
    (root / kname / "queue").mkdir(parents=True)
    (root / kname / "queue" / "rq_affinity").write_text(rq_affinity + "\n")
    for i, cpus in enumerate(cpu_lists):
        (root / kname / "mq" / str(i)).mkdir(parents=True)
        (root / kname / "mq" / str(i) / "cpu_list").write_text(cpus + "\n")


def test_a_device_without_queues_of_its_own_uses_those_beneath_it(tmp_path: Path) -> None:
    fake_sysfs(tmp_path, "sda", "0, 1", "2, 3")
    fake_sysfs(tmp_path, "sdb", "4")
    (tmp_path / "dm-0" / "queue").mkdir(parents=True)  # bio-based: no mq/
    chain = [
        {"kname": "dm-0", "parents": ["sda", "sdb"]},
        {"kname": "sda", "parents": []},
        {"kname": "sdb", "parents": []},
    ]
    found = queue_context({"chain": chain}, tmp_path)
    assert [d["kname"] for d in found["devices"]] == ["sda", "sdb"]
    assert found["note"] == (
        "dm-0 has no blk-mq queues of its own; those of the devices beneath it: sda, sdb"
    )
    sda = found["devices"][0]
    assert sda["hw_queues"] == [
        {"queue": 0, "cpus": "0-1", "nr_tags": None},  # nr_tags missing: tolerated
        {"queue": 1, "cpus": "2-3", "nr_tags": None},
    ]
    assert (sda["cpus"], sda["rq_affinity"], sda["nomerges"]) == ("0-3", 1, None)
    assert pinning("/dev/dm-0", {"queues": found}, None).cpus == (0, 2, 4, 1, 3)
    none = queue_context({"chain": [{"kname": "zram0", "parents": []}]}, tmp_path)
    assert none["devices"] == []
    assert none["note"] == (
        "no blk-mq queues: zram0 and the devices beneath it have none (no mq/ in sysfs)"
    )


# -- real loop devices ------------------------------------------------------------------------


def sysfs_cpus(dev: str) -> list[list[int]]:
    """Each hardware queue's CPUs of a real device, from sysfs, by queue number."""
    mq = Path("/sys/block", Path(dev).name, "mq")
    entries = sorted((e for e in mq.iterdir() if e.name.isdigit()), key=lambda e: int(e.name))
    return [sorted(parse_cpu_list((e / "cpu_list").read_text())) for e in entries]


def guide_cpus(dev: str, numjobs: int) -> str:
    """What the guide's script pins ``numjobs`` jobs to, from sysfs, here."""
    lists = sysfs_cpus(dev)
    usable = os.sched_getaffinity(0) & online()
    order: list[int] = []
    for i in range(max(len(cpus) for cpus in lists)):
        order += [cpus[i] for cpus in lists if i < len(cpus) and cpus[i] not in order]
    order = [c for c in order if c in usable]
    without_0 = [c for c in order if c != 0]
    return format_cpu_list((without_0 if len(without_0) >= numjobs else order)[:numjobs])


@pytest.fixture
def loop_dev(scratch: Scratch) -> Iterator[str]:
    dev = scratch.loop()
    if not Path("/sys/block", Path(dev).name, "mq").is_dir():
        pytest.skip(f"{dev} has no blk-mq queues on this kernel")
    yield dev


@pytest.mark.root
def test_the_context_holds_each_queues_cpus_and_info_shows_them(
    cli: Cli, loop_dev: str, scratch: Scratch
) -> None:
    kname = Path(loop_dev).name
    ctx = probe_target(loop_dev)["queues"]
    (device,) = ctx["devices"]
    assert device["kname"] == kname and ctx["note"] is None
    assert [parse_cpu_list(q["cpus"]) for q in device["hw_queues"]] == [
        set(cpus) for cpus in sysfs_cpus(loop_dev)
    ]
    queue = Path("/sys/block", kname, "queue")
    assert device["rq_affinity"] == int((queue / "rq_affinity").read_text())
    assert device["nomerges"] == int((queue / "nomerges").read_text())
    code, out, err = cli("info", loop_dev)
    assert code == 0, err
    first = device["hw_queues"][0]
    assert f"queues {kname}" in out
    assert f"#0 CPUs {first['cpus']} ({first['nr_tags']} tags)" in out
    assert f"rq_affinity {device['rq_affinity']}" in out
    # A partition has no queues of its own: its disk's; a directory: the device under it.
    part, _ = scratch.partition(loop_dev)
    assert [d["kname"] for d in probe_target(part)["queues"]["devices"]] == [kname]
    scratch.mkfs(part)
    mounted = scratch.mount(part)
    assert [d["kname"] for d in probe_target(str(mounted))["queues"]["devices"]] == [kname]


@pytest.mark.root
def test_a_target_without_a_device_is_refused_before_anything_runs(cli: Cli) -> None:
    if (probe_target("/dev/shm").get("filesystem") or {}).get("fstype") != "tmpfs":
        pytest.skip("/dev/shm is not tmpfs here")
    code, _, err = cli("run", "/dev/shm", "--suite", "quick", "--pin-to-device")
    assert code == ExitCode.BAD_INPUT
    assert "--pin-to-device: /dev/shm has nothing to pin to: no blk-mq queues: tmpfs is " in err
    assert "leave out --pin-to-device" in err


@pytest.mark.root
@pytest.mark.fio
def test_pin_to_device_runs_fio_on_the_cpus_of_the_queues(
    cli: Cli, loop_dev: str, tmp_path: Path, real_fio: str, isolated_db: Path
) -> None:
    path = suite_file(tmp_path, '[[workload]]\nname = "w2"\nnumjobs = 2')
    code, out, err = cli("run", loop_dev, "--suite", str(path), "--pin-to-device", "--json")
    assert code == 0, err
    doc = json.loads(out)
    pinned = [w for w in doc["warnings"] if w["id"] == "pinned-to-device"]
    assert (
        len(pinned) == 1
        and f"cpus_allowed={guide_cpus(loop_dev, 1)} for w1" in (pinned[0]["message"])
    )
    # Pinning is what was asked for: the note does not offer to undo it as a fix.
    assert pinned[0]["fix"].startswith("nothing to do: compare with runs pinned alike")
    with Store.open(isolated_db) as store:
        run = store.get_run(store.resolve("latest"), with_raw=True)
    assert [r.workload for r in run.results] == ["w1", "w2"]
    for r, numjobs in zip(run.results, (1, 2), strict=True):
        expected = guide_cpus(loop_dev, numjobs)
        assert f"\ncpus_allowed={expected}\ncpus_allowed_policy=split\n" in r.job_file
        assert r.params["options"]["cpus_allowed"] == expected
        assert r.raw_output is not None
        *_, (_, _, fio) = scan_objects(r.raw_output)  # the last report: the job's end
        (job,) = fio["jobs"]
        assert job["job options"]["cpus_allowed"] == expected  # fio ran it so
        assert job["error"] == 0 and job["read"]["total_ios"] > 0


@pytest.mark.root
def test_too_many_jobs_for_the_queues_cpus_are_refused(
    cli: Cli, loop_dev: str, tmp_path: Path
) -> None:
    usable = len(os.sched_getaffinity(0) & online())
    path = suite_file(tmp_path, numjobs=usable + 1)
    code, out, _ = cli("doctor", loop_dev, "--suite", str(path), "--pin-to-device", "--json")
    assert code == ExitCode.BAD_INPUT
    refusal = json.loads(out)["refused"]
    assert f"w1 runs {usable + 1} jobs, but {usable} CPU" in refusal["message"]
    assert f"lower numjobs to {usable} or fewer" in refusal["hint"]


@pytest.mark.root
def test_doctor_gives_the_rq_affinity_command_and_never_writes_sysfs(
    cli: Cli, loop_dev: str, tmp_path: Path
) -> None:
    setting = Path("/sys/block", Path(loop_dev).name, "queue", "rq_affinity")
    before = setting.read_text()
    path = str(suite_file(tmp_path))
    try:
        setting.write_text("1")  # the test sets it; iobench only reads it
        code, out, err = cli("doctor", loop_dev, "--suite", path, "--pin-to-device", "--json")
        assert code == 0, err
        (finding,) = [w for w in json.loads(out)["warnings"] if w["id"] == "rq-affinity"]
        assert finding["fix"].startswith(f"as root: echo 2 > {setting} ")
        assert finding["severity"] == "info" and finding["target"] == loop_dev
        assert setting.read_text().strip() == "1"
        job = json.loads(out)["jobs"][0]["job_file"]
        assert f"cpus_allowed={guide_cpus(loop_dev, 1)}\n" in job
        setting.write_text("2")
        code, out, err = cli("doctor", loop_dev, "--suite", path, "--pin-to-device", "--json")
        assert code == 0, err
        assert "rq-affinity" not in [w["id"] for w in json.loads(out)["warnings"]]
        code, out, err = cli("doctor", loop_dev, "--suite", path, "--json")
        ids = [w["id"] for w in json.loads(out)["warnings"]]
        assert "pinned-to-device" not in ids and "cpus_allowed" not in out
    finally:
        setting.write_text(before)


@pytest.mark.root
def test_suites_export_pins_as_run_does_and_plain_fio_reads_it(
    cli: Cli, loop_dev: str, real_fio: str, tmp_path: Path
) -> None:
    out = tmp_path / "pinned.fio"
    args = ("suites", "export", "quick", "--target", loop_dev, "--destructive")
    code, _, err = cli(*args, "--pin-to-device", "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    sections = re.findall(r"^\[(.*)\]\n((?:[^\[\n].*\n)*)", text, re.M)
    jobs = {name: dict(line.split("=", 1) for line in body.splitlines() if "=" in line)
            for name, body in sections if name not in ("global", "iobench:layout")}  # fmt: skip
    assert jobs and len(jobs) == len(load_builtin("quick").workloads)
    for name, opts in jobs.items():
        assert opts["cpus_allowed"] == guide_cpus(loop_dev, int(opts["numjobs"])), name
        assert opts["cpus_allowed_policy"] == "split", name
    assert f"CPUs of {Path(loop_dev).name}'s blk-mq queues" in " ".join(
        line.lstrip("# ") for line in text.splitlines() if line.startswith("#")
    )
    fio = subprocess.run([real_fio, "--parse-only", str(out)], capture_output=True, text=True)
    assert fio.returncode == 0, fio.stderr
    # Unpinned, the same export has no placement; pinning needs a device to pin to.
    code, plain, err = cli(*args)
    assert code == 0 and "cpus_allowed" not in plain, err
    code, _, err = cli("suites", "export", "quick", "--pin-to-device")
    assert code == 2 and "--pin-to-device needs --target" in err
