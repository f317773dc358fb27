"""`iobench run` on real loop devices: the safety rules as a user meets them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MINI_SUITE, Cli
from scratch import Scratch, sha256_of


@pytest.mark.root
def test_write_suite_on_ext4_loop_device_is_refused_and_device_unchanged(
    cli: Cli, scratch: Scratch
) -> None:
    dev = scratch.loop()
    scratch.mkfs(dev)
    before = sha256_of(dev)
    code, out, err = cli("run", dev, "--suite", "quick")
    assert code == 3
    assert "--destructive" in err
    code, out, err = cli("run", dev, "--suite", "quick", "--destructive", "--json")
    assert code == 3
    assert out == ""
    assert "ext4" in err and "--overwrite-signatures" in err
    assert sha256_of(dev) == before
    code, out, _ = cli("list", "--json")
    assert json.loads(out)["runs"] == [], "a refused run stores nothing"


@pytest.mark.root
@pytest.mark.fio
def test_read_only_suite_runs_on_a_device_without_destructive(
    cli: Cli, scratch: Scratch, real_fio: str, tmp_path: Path
) -> None:
    dev = scratch.loop()
    scratch.mkfs(dev)  # reading a device that holds a filesystem is harmless
    before = sha256_of(dev)
    suite = tmp_path / "reads.toml"
    suite.write_text(MINI_SUITE.split('[[workload]]\nname = "rw"')[0])
    code, out, err = cli("run", dev, "--suite", str(suite), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["targets"][0]["kind"] == "block"
    assert doc["results"][0]["read"]["iops"] > 0
    assert sha256_of(dev) == before


@pytest.mark.root
@pytest.mark.fio
def test_destructive_run_on_a_blank_device(
    cli: Cli, scratch: Scratch, real_fio: str, mini_suite: str
) -> None:
    dev = scratch.loop()
    code, out, err = cli("run", dev, "--suite", mini_suite, "--destructive", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["workload"] for r in doc["results"]] == ["rr", "rw"]
    assert doc["results"][1]["write"]["iops"] > 0
    chain = doc["targets"][0]["context"]["block"]["chain"]
    assert chain[0]["type"] == "loop" and chain[0]["backing_file"].endswith(".img")
