"""compare, report and export through the CLI: exit codes and messages (no fio needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli
from iobench.fio.parse import parse_fio_output
from iobench.metrics import workload_metrics
from iobench.records import ResultRecord, TargetRecord, now_iso
from iobench.store import Store

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"


def _store_run(
    store: Store,
    label: str,
    status: str = "complete",
    speed: float = 1.0,
    *,
    target: tuple[str, str] | None = None,
) -> int:
    """A run of one workload, twice, on the target ``(spec, path)`` (``/label``)."""
    spec, path = target or (f"/{label}", f"/{label}")
    output = parse_fio_output((RECORDED / "libaio-randread-4k-qd8-jsonplus.json").read_text())
    metrics = workload_metrics(output, {"bs": 4096, "iodepth": 8, "numjobs": 1})
    run_id = store.create_run(
        suite="quick",
        suite_def={"name": "quick"},
        label=label,
        argv=["iobench", "run"],
        host={"hostname": "h"},
        iobench_version="0.1.0",
        targets=[TargetRecord(0, spec, path, "directory", None, {})],
    )
    for rep in (1, 2):
        m = json.loads(json.dumps(metrics))
        m["read"]["iops"] *= speed * (1 + rep / 1000)
        store.add_result(
            run_id,
            ResultRecord(
                target=spec, workload="rr", position=0, status="ok",
                params={"rw": "randread", "bs": 4096, "iodepth": 8, "numjobs": 1,
                        "ioengine": "libaio", "direct": True, "runtime_s": 1.0, "ramp_s": 0.0,
                        "size": 16 << 20, "rwmixread": None, "options": {}},
                metrics=m, job_file="", fio_argv=[], fio_rc=0, fio_version="3.33",
                raw_output=None, fio_stdout=None, fio_stderr=None, error=None,
                started_at=now_iso(), finished_at=now_iso(), repetition=rep,
            ),
        )  # fmt: skip
    store.finish_run(run_id, status=status, fio_version="3.33", warnings=[])
    return run_id


@pytest.fixture
def two_runs(isolated_db: Path) -> tuple[int, int]:
    with Store.open(isolated_db) as store:
        return _store_run(store, "local"), _store_run(store, "ceph", speed=0.5)


def test_compare_two_labels(cli: Cli, two_runs: tuple[int, int]) -> None:
    code, out, err = cli("compare", "--label", "local", "--label", "ceph", "--json")
    assert code == 0, err
    doc = json.loads(out)
    (row,) = doc["rows"]
    assert row["cells"][1]["iops_ratio"] == pytest.approx(0.5)
    assert row["cells"][1]["verdict"] == "slower"
    code, out, _ = cli("compare", "1", "2")
    assert code == 0
    assert "50 %" in out and "slower" in out


def test_compare_refuses_a_run_named_twice(cli: Cli, two_runs: tuple[int, int]) -> None:
    code, out, err = cli("compare", "1", "--label", "local")
    assert (code, out) == (2, "")
    assert err == (
        "iobench: error: run 1 is named twice\n"
        "  what to do: name each run once (a label names its latest complete run)\n"
    )


def test_compare_unknown_label(cli: Cli, two_runs: tuple[int, int]) -> None:
    code, _, err = cli("compare", "1", "--label", "nfs")
    assert code == 2
    assert err == (
        "iobench: error: no stored run has the label 'nfs'\n"
        "  what to do: see the labels with `iobench list`\n"
    )


def test_label_prefers_the_latest_complete_run(
    cli: Cli, two_runs: tuple[int, int], isolated_db: Path
) -> None:
    with Store.open(isolated_db) as store:
        _store_run(store, "local", status="aborted", speed=9.0)
    code, out, err = cli("compare", "--label", "local", "--label", "ceph", "--json")
    assert code == 0, err
    assert [s["run_id"] for s in json.loads(out)["setups"]] == [1, 2]


def test_report_format_comes_from_the_file_name(
    cli: Cli, two_runs: tuple[int, int], tmp_path: Path
) -> None:
    code, _, err = cli("report", "1", "2", "-o", str(tmp_path / "r.txt"))
    assert code == 2
    assert "the report format comes from the file name; use .html or .md" in err
    code, _, err = cli("report", "1", "-o", str(tmp_path / "nodir" / "r.md"))
    assert code == 2 and "does not exist" in err
    code, _, err = cli("report", "1", "-o", str(tmp_path / "r.md"), "--baseline", "2")
    assert code == 2 and "--baseline 2" in err
    assert list(tmp_path.iterdir()) == []


def test_report_writes_markdown_and_html_whole(
    cli: Cli, two_runs: tuple[int, int], tmp_path: Path
) -> None:
    code, _, err = cli("report", "1", "2", "-o", str(tmp_path / "r.md"))
    assert code == 0, err
    assert err == f"wrote {tmp_path / 'r.md'} (2 run(s))\n"
    text = (tmp_path / "r.md").read_text()
    assert "| workload" in text and "local" in text and "ceph" in text
    code, _, _ = cli("report", "latest", "-o", str(tmp_path / "r.html"))
    assert code == 0
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.md"], "no temp files left"


def test_export_csv_and_errors(cli: Cli, two_runs: tuple[int, int], tmp_path: Path) -> None:
    code, out, _ = cli("export", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("run_id,label,target,workload,repetition,direction")
    assert len(lines) == 1 + 2, "one row per workload, direction and repetition"
    code, _, err = cli("export", "9")
    assert code == 2 and "there is no run 9" in err


def test_a_run_stored_with_a_relative_target_still_reads_shows_and_compares(
    cli: Cli, isolated_db: Path, tmp_path: Path
) -> None:
    """Runs stored before targets were stored by their absolute path keep their ".";
    where they were is the target's path, which the headings add."""
    with Store.open(isolated_db) as store:
        _store_run(store, "old", target=(".", "/data/vol"))
        _store_run(store, "new", target=("/data/vol", "/data/vol"), speed=0.5)
    code, out, err = cli("show", "1")
    assert code == 0, err
    assert ". \u2192 /data/vol (directory" in out
    code, out, _ = cli("show", "2")
    assert "/data/vol (directory" in out and "\u2192" not in out
    code, out, _ = cli("list", "--json")
    assert [r["targets"] for r in json.loads(out)["runs"]] == [["/data/vol"], ["."]]
    code, out, err = cli("compare", "1", "2", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [s["target"] for s in doc["setups"]] == [".", "/data/vol"]
    assert [c["verdict"] for c in doc["rows"][0]["cells"]] == ["baseline", "slower"]
    code, out, err = cli("compare", "1", "2")
    # The baseline and where it ran, then each other setup with its headline: the verdicts
    # counted and the size of the difference, as the reports sum them up.
    assert out.startswith(
        "comparing 2 setups, baseline old (run 1 on .)\n"
        "  new (run 2 on /data/vol): slower in 1 of 1 workload; IOPS 50 % of the baseline\n"
    )
    code, _, err = cli("report", "1", "2", "-o", str(tmp_path / "r.md"))
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    assert "- target . \u2192 /data/vol: directory" in text
    assert "- target /data/vol: directory" in text
    assert "- **new** against **old**: slower in 1 of 1 workload; IOPS 50 % of the baseline" in text
    code, out, _ = cli("export", "1", "--format", "json")
    assert json.loads(out)["targets"][0]["spec"] == "."


def test_labels_and_messages_are_text_not_markup_or_emoji(
    cli: Cli, isolated_db: Path, tmp_path: Path
) -> None:
    with Store.open(isolated_db) as store:
        _store_run(store, "a:x:[b]c[/]")
    code, out, _ = cli("list")
    assert code == 0 and "a:x:[b]c[/]" in out
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    code, _, err = cli("import", str(passwd))
    assert code == 2 and "root:x:0:0" in err


def test_a_negative_run_ref_is_a_run_not_an_option(
    cli: Cli, two_runs: tuple[int, int], tmp_path: Path
) -> None:
    """`-2` is the second newest run for every command that takes RUNs (click would take
    it for an unknown option)."""
    code, out, err = cli("show", "-2", "--json")
    assert code == 0, err
    assert json.loads(out)["run_id"] == 1
    code, out, err = cli("export", "-1", "--format", "json")
    assert code == 0 and json.loads(out)["run_id"] == 2, err
    code, out, err = cli("compare", "-1", "-2", "--json")
    assert code == 0, err
    assert [s["run_id"] for s in json.loads(out)["setups"]] == [2, 1]
    code, _, err = cli("report", "-2", "-o", str(tmp_path / "r.md"))
    assert code == 0, err
    assert (tmp_path / "r.md").read_text().startswith("# iobench report: run 1")
