"""Hostile imports (issue 11, point 5): every file given to `iobench import` is validated
completely before anything is stored; finding the JSON in text takes linear time; text
kept beside it is capped; a forged `imported_from.uuid` cannot keep the genuine run out.
No fio runs here: the inputs are recorded fio outputs and exports of runs imported from
them, changed the way an attacker or a damaged disk would."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Cli
from iobench.documents import schema
from iobench.jsontext import MAX_DEPTH, scan_objects

RECORDED = Path(__file__).parent / "data" / "fio-outputs" / "recorded"
FIO_JSON = RECORDED / "libaio-randread-4k-qd8-jsonplus.json"
CLIENTS_JSON = RECORDED / "client-server-2-jsonplus.json"

Doc = dict[str, Any]


def _fio_report(path: Path = FIO_JSON) -> tuple[str, Doc]:
    """The text before fio's report, and the report."""
    text = path.read_text()
    start, _, report = next(
        o for o in scan_objects(text) if "jobs" in o[2] or "client_stats" in o[2]
    )
    return text[:start], report


def _runs(db: Path) -> int:
    if not db.exists():
        return 0
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])
    finally:
        conn.close()


def _refused(cli: Cli, path: Path, db: Path, *where: str) -> str:
    """Import ``path``: exit 2, the file and each of ``where`` named, nothing stored."""
    before = _runs(db)
    code, out, err = cli("import", str(path))
    assert code == 2, err
    assert err.startswith(f"iobench: error: {path}"), err
    for part in where:
        assert part in err, err
    assert "internal error" not in err and "Traceback" not in err
    assert out == ""
    assert _runs(db) == before, "nothing was stored"
    return err


# -- numbers fio never writes, in fio's own output -----------------------------------------------

# Raw JSON text put in place of a value: what json.dumps would never write, or values that
# are valid JSON but not something fio reports.
HOSTILE_NUMBERS = {
    "NaN": "not a number JSON allows",
    "Infinity": "not a number JSON allows",
    "-Infinity": "not a number JSON allows",
    "1e400": "not a finite number",
    "-1e400": "not a finite number",
    str(2**64): "beyond 64 bits",
    "1" + "0" * 30: "beyond 64 bits",
    "9" * 5000: "beyond 64 bits",
    "-1": "below 0",
    "-0.5": "below 0",
    "1e300": "more than fio counts or measures",
}
FIO_FIELDS = [
    ("jobs[0].read.iops", ["jobs", 0, "read", "iops"]),
    ("jobs[0].read.io_bytes", ["jobs", 0, "read", "io_bytes"]),
    ("jobs[0].read.total_ios", ["jobs", 0, "read", "total_ios"]),
    ("jobs[0].read.runtime", ["jobs", 0, "read", "runtime"]),
    ("jobs[0].read.clat_ns.mean", ["jobs", 0, "read", "clat_ns", "mean"]),
    ("jobs[0].read.clat_ns.N", ["jobs", 0, "read", "clat_ns", "N"]),
    ("jobs[0].usr_cpu", ["jobs", 0, "usr_cpu"]),
    ("disk_util[0].util", ["disk_util", 0, "util"]),
]
MARK = "__HOSTILE__"


def _set(doc: Doc, path: list[Any], value: Any) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


def _write_with(tmp_path: Path, report: Doc, path: list[Any], raw: str, before: str = "") -> Path:
    doc = copy.deepcopy(report)
    _set(doc, path, MARK)
    out = tmp_path / "fio.json"
    out.write_text(before + json.dumps(doc, indent=1).replace(f'"{MARK}"', raw))
    return out


@pytest.mark.parametrize("raw", sorted(HOSTILE_NUMBERS))
@pytest.mark.parametrize(("where", "path"), FIO_FIELDS, ids=[f for f, _ in FIO_FIELDS])
def test_a_number_fio_never_writes_is_refused_naming_the_field(
    cli: Cli, tmp_path: Path, isolated_db: Path, where: str, path: list[Any], raw: str
) -> None:
    before, report = _fio_report()
    err = _refused(cli, _write_with(tmp_path, report, path, raw, before), isolated_db)
    field = where.split(".")[-1]
    assert re.search(rf"{re.escape(where.split('.')[0])}.*{re.escape(field)}", err), err
    assert HOSTILE_NUMBERS[raw] in err, err


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            lambda r: _set(r, ["timestamp"], 10**11),
            "'timestamp' 100000000000 is not a time before 2100",
        ),
        (lambda r: _set(r, ["timestamp"], -5), "'timestamp' is -5, below 0"),
        (
            lambda r: _set(r, ["timestamp_ms"], 10**16),
            "'timestamp_ms': 10000000000000000 is not a time",
        ),
        (lambda r: _set(r, ["jobs", 0, "job_start"], -1), "'job_start': -1 is not a time"),
        (lambda r: _set(r, ["jobs", 0, "job_start"], "soon"), "'job_start': soon is not a time"),
        (lambda r: _set(r, ["jobs", 0, "error"], 2**40), "'error' 1099511627776 is not an error"),
        (lambda r: _set(r, ["jobs", 0, "read", "clat_ns", "bins", "4096"], -2), "bin 4096"),
        (
            lambda r: _set(r, ["jobs", 0, "read", "clat_ns", "bins", "9" * 25], 1),
            "is not a latency",
        ),
        (lambda r: _set(r, ["jobs", 0, "jobname"], "\ud800"), "not valid Unicode"),
    ],
)
def test_times_and_counts_fio_never_writes_are_refused(
    cli: Cli, tmp_path: Path, isolated_db: Path, change: Callable[[Doc], None], said: str
) -> None:
    before, report = _fio_report()
    change(report)
    path = tmp_path / "fio.json"
    path.write_text(before + json.dumps(report))
    _refused(cli, path, isolated_db, said)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000])
def test_nesting_deeper_than_any_fio_report_is_refused_quickly(
    cli: Cli, tmp_path: Path, isolated_db: Path, depth: int
) -> None:
    before, report = _fio_report()
    report["jobs"][0]["deep"] = MARK
    path = tmp_path / "deep.json"
    nested = "[" * depth + "]" * depth
    path.write_text(before + json.dumps(report).replace(f'"{MARK}"', nested))
    _refused(cli, path, isolated_db, f"nests deeper than {MAX_DEPTH} levels")
    # The same as a whole document (no text before it): a run document would nest so too.
    whole = tmp_path / "deep-doc.json"
    whole.write_text('{"kind": "run", "schema_version": 1, "x": ' + nested + "}")
    _refused(cli, whole, isolated_db, f"nests deeper than {MAX_DEPTH} levels")


# -- finding the JSON: linear time, text beside it capped ------------------------------------------

CRAFTED: dict[str, Callable[[int], str]] = {
    "open braces": lambda n: "{" * n,
    "quoted braces": lambda n: '"{' * (n // 2),
    "nested, never closed": lambda n: '{"a":' * (n // 5),
    "nested, closed, invalid": lambda n: '{"a":' * (n // 10) + "x" + "}" * (n // 10),
    "braces in strings, line by line": lambda n: ('{"x": "' + "{" * 100 + '"\n') * (n // 108),
    "fio messages with stray braces": lambda n: "fio: {oops\n" * (n // 11),
}


@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_finding_the_json_is_linear_in_the_size_of_the_text(kind: str) -> None:
    """Counted work, not time (the 186 KB file that took 7 s took ~900 million steps)."""
    report = FIO_JSON.read_text()
    for n in (20_000, 200_000):
        text = CRAFTED[kind](n) + "\n" + report
        cost: dict[str, int] = {}
        found = scan_objects(text, cost=cost)
        assert any("jobs" in o for _, _, o in found), "the report after the junk is found"
        assert cost["walked"] <= 3 * len(text), cost
        assert cost["decoded"] <= 3 * len(text), cost


def test_text_kept_beside_the_json_is_capped(cli: Cli, tmp_path: Path) -> None:
    before, report = _fio_report()
    noise = "".join(f"fio: message {i} " + "x" * 2000 + "\n" for i in range(5000))
    path = tmp_path / "noisy.json"
    path.write_text(noise + before + json.dumps(report))
    code, _, err = cli("import", str(path))
    assert code == 0, err
    code, out, _ = cli("export", "1", "--format", "json")
    messages = json.loads(out)["suite_def"]["messages"]
    assert len(messages) == 201
    assert all(len(m) <= 506 for m in messages)
    assert messages[0].startswith("fio: message 0 ") and messages[0].endswith(" [cut]")
    assert messages[-1] == "[4800 more lines are in the raw output]"


# -- exported run documents: every field typed ---------------------------------------------------


@pytest.fixture
def exported(cli: Cli, tmp_path: Path) -> Doc:
    """A run imported from fio output with histograms, exported whole."""
    source = str(tmp_path / "source.db")
    assert cli("--db", source, "import", str(FIO_JSON))[0] == 0
    code, out, err = cli("--db", source, "export", "1", "--format", "json")
    assert code == 0, err
    doc: Doc = json.loads(out)
    return doc


def _result(d: Doc) -> Doc:
    r: Doc = d["results"][0]
    return r


MISTYPED: list[tuple[str, Callable[[Doc], None], str]] = [
    (
        "lat_ns.n",
        lambda d: _result(d)["read"]["lat_ns"].update(n="many"),
        "results[0].read.lat_ns.n: must be a whole number",
    ),
    (
        "lat_ns",
        lambda d: _result(d)["read"].update(lat_ns=[1, 2]),
        "results[0].read.lat_ns: must be an object or null",
    ),
    (
        "lat_ns.p99",
        lambda d: _result(d)["read"]["lat_ns"].update(p99=-3),
        "results[0].read.lat_ns.p99: -3 is out of range",
    ),
    (
        "bins value",
        lambda d: _result(d)["read"]["clat_ns"]["bins"].update({"4096": "x"}),
        "results[0].read.clat_ns.bins.4096: must be a whole number",
    ),
    (
        "bins key",
        lambda d: _result(d)["read"]["clat_ns"]["bins"].update({"-7": 1}),
        'results[0].read.clat_ns.bins: "-7" is not a name allowed here',
    ),
    (
        "bins",
        lambda d: _result(d)["read"]["clat_ns"].update(bins=[1]),
        "results[0].read.clat_ns.bins: must be an object",
    ),
    (
        "iops",
        lambda d: _result(d)["read"].update(iops=None),
        "results[0].read.iops: must be a number, not null",
    ),
    (
        "io_bytes",
        lambda d: _result(d)["read"].update(io_bytes=-1),
        "results[0].read.io_bytes: -1 is out of range",
    ),
    ("cpu", lambda d: _result(d).update(cpu="busy"), "results[0].cpu: must be an object or null"),
    (
        "disk_util",
        lambda d: _result(d).update(disk_util=[{"name": 3}]),
        "results[0].disk_util[0].name: must be text",
    ),
    (
        "samples",
        lambda d: _result(d).update(samples={"interval_ms": 0}),
        "results[0].samples.interval_ms: 0 is out of range",
    ),
    (
        "params.bs",
        lambda d: _result(d)["params"].update(bs="4k"),
        "results[0].params.bs: must be a whole number or null",
    ),
    (
        "params.options",
        lambda d: _result(d)["params"].update(options={"iodepth": 8}),
        "results[0].params.options.iodepth: must be text",
    ),
    (
        "started_at",
        lambda d: _result(d).update(started_at="yesterday"),
        'results[0].started_at: "yesterday" is not a date and time',
    ),
    (
        "started_at date",
        lambda d: d.update(started_at="2026-02-30T00:00:00Z"),
        'started_at: "2026-02-30T00:00:00Z" is not a date and time',
    ),
    (
        "finished_at year",
        lambda d: d.update(finished_at="9999-01-01T00:00:00.000Z"),
        'finished_at: "9999-01-01T00:00:00.000Z" is not a date',
    ),
    (
        "repetition",
        lambda d: _result(d).update(repetition=0),
        "results[0].repetition: 0 is out of range (minimum 1)",
    ),
    ("host", lambda d: d.update(host=[]), "host: must be an object, not a list"),
    (
        "host.cpu",
        lambda d: d["host"].update(cpu="x86"),
        'host.cpu: must be an object or null, not "x86"',
    ),
    (
        "host.cpu.online",
        lambda d: d["host"].update(cpu={"online": 0}),
        "host.cpu.online: 0 is out of range",
    ),
    (
        "host.kernel",
        lambda d: d["host"].update(kernel={"release": 6}),
        "host.kernel.release: must be text or null, not 6",
    ),
    (
        "context",
        lambda d: d["targets"][0].update(context="ext4"),
        'targets[0].context: must be an object, not "ext4"',
    ),
    (
        "context.filesystem",
        lambda d: d["targets"][0]["context"].update(filesystem=[1]),
        "targets[0].context.filesystem: must be null or an object",
    ),
    (
        "context.block.disks",
        lambda d: d["targets"][0]["context"].update(block={"disks": [{"size_bytes": "big"}]}),
        "targets[0].context.block.disks[0].size_bytes: must be a whole number or null",
    ),
    (
        "context.options_parsed",
        lambda d: d["targets"][0]["context"].update(filesystem={"options_parsed": {"rw": 1}}),
        "targets[0].context.filesystem.options_parsed.rw: must be text or true or false",
    ),
    (
        "warnings.data",
        lambda d: d["warnings"].insert(
            0, {"id": "x", "severity": "info", "message": "m", "data": {"a": [1]}}
        ),
        "warnings[0].data.a: must be a number or text",
    ),
    (
        "warnings.id",
        lambda d: d["warnings"].insert(0, {"id": "", "severity": "info", "message": "m"}),
        "warnings[0].id: must not be empty",
    ),
    (
        "suite_def.spec",
        lambda d: d["suite_def"].update(spec={"spec": "x", "iops": 0, "bw_bytes": 1}),
        "suite_def.spec.iops: 0 is out of range",
    ),
    (
        "suite_def.plan",
        lambda d: d["suite_def"].update(plan={"settings": {"budget_s": "long"}}),
        "suite_def.plan.settings.budget_s: must be a number",
    ),
    (
        "suite_def.expectations",
        lambda d: d["suite_def"].update(
            expectations=[
                {
                    "text": "t",
                    "workload": "w",
                    "direction": "up",
                    "metric": "iops",
                    "op": ">=",
                    "value": 1,
                }
            ]
        ),
        'suite_def.expectations[0].direction: "up" is not one of',
    ),
    (
        "suite_def.imported_from",
        lambda d: d["suite_def"].update(imported_from={"uuid": 7}),
        "suite_def.imported_from.uuid: must be text, not 7",
    ),
    (
        "suite_def.clients",
        lambda d: d["suite_def"].update(clients={"names": "a,b"}),
        'suite_def.clients.names: must be a list, not "a,b"',
    ),
    ("status", lambda d: d.update(status="done"), 'status: "done" is not one of'),
    ("uuid", lambda d: d.update(uuid=""), "uuid: must not be empty"),
]


@pytest.mark.parametrize(
    ("change", "said"), [(c, s) for _, c, s in MISTYPED], ids=[n for n, _, _ in MISTYPED]
)
def test_a_mistyped_field_of_a_run_document_is_named(
    cli: Cli,
    tmp_path: Path,
    isolated_db: Path,
    exported: Doc,
    change: Callable[[Doc], None],
    said: str,
) -> None:
    change(exported)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(exported))
    err = _refused(cli, path, isolated_db, f"{path}: {said}")
    assert "what to do:" in err


@pytest.mark.parametrize("raw", ["NaN", "1e999", str(2**64), '"\\udfff"'])
def test_a_run_document_with_a_value_iobench_never_writes_is_refused(
    cli: Cli, tmp_path: Path, isolated_db: Path, exported: Doc, raw: str
) -> None:
    _result(exported)["read"]["lat_ns"]["mean"] = MARK
    path = tmp_path / "run.json"
    path.write_text(json.dumps(exported).replace(f'"{MARK}"', raw))
    _refused(cli, path, isolated_db, f"{path}: results[0].read.lat_ns.mean")


# -- whatever is imported, every reader copes --------------------------------------------------

_LEAVES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.none(),
    st.booleans(),
    st.just([]),
    st.just({}),
    st.just("[/]"),
    st.just("2026-13-45T00:00:00Z"),
)


def _paths(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here] if here else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += _paths(v, (*here, i))
    return found


def _mutated(doc: Doc, data: st.DataObject) -> Doc:
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)
        where = data.draw(st.sampled_from(paths))
        _set(doc, list(where), data.draw(_LEAVES))
    return doc


def _import_then_read(cli: Cli, tmp_path: Path, doc: Doc, before: str = "") -> None:
    """Refused (2), or imported and then shown, reported, exported, compared and
    imported again, each without failing."""
    db = tmp_path / f"{id(doc)}.db"
    path = tmp_path / "case.json"
    path.write_text(before + json.dumps(doc))
    assert cli("--db", str(db), "import", str(FIO_JSON))[0] == 0
    code, _, err = cli("--db", str(db), "import", str(path))
    assert code in (0, 2) and "internal error" not in err, err
    if code == 2:
        return
    for args in (
        ("show", "2"),
        ("show", "2", "--raw"),
        ("show", "2", "--json"),
        ("list",),
        ("compare", "1", "2"),
        ("report", "1", "2", "-o", str(tmp_path / "r.md")),
        ("report", "2", "-o", str(tmp_path / "r.html")),
        ("export", "2"),
        ("export", "2", "--format", "json", "-o", str(tmp_path / "again.json")),
    ):
        code, _, err = cli("--db", str(db), *args)
        assert code == 0, f"{args}: {err}"
    code, _, err = cli(
        "--db", str(tmp_path / f"{id(doc)}-again.db"), "import", str(tmp_path / "again.json")
    )
    assert code == 0, f"an export of what was imported imports again: {err}"


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_change_to_a_run_document_is_refused_or_read_by_everything(
    cli: Cli, tmp_path: Path, exported: Doc, data: st.DataObject
) -> None:
    _import_then_read(cli, tmp_path, _mutated(exported, data))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), source=st.sampled_from([FIO_JSON, CLIENTS_JSON]))
def test_any_change_to_fio_output_is_refused_or_read_by_everything(
    cli: Cli, tmp_path: Path, data: st.DataObject, source: Path
) -> None:
    before, report = _fio_report(source)
    _import_then_read(cli, tmp_path, _mutated(report, data), before)


# -- a forged imported_from.uuid ----------------------------------------------------------


def test_a_forged_origin_does_not_keep_the_genuine_run_out(
    cli: Cli, tmp_path: Path, exported: Doc
) -> None:
    genuine = tmp_path / "genuine.json"
    genuine.write_text(json.dumps(exported))
    forged_doc = copy.deepcopy(exported)
    forged_doc["uuid"] = "00000000-0000-0000-0000-000000000000"
    forged_doc["suite_def"]["imported_from"] = {"uuid": exported["uuid"]}
    _result(forged_doc)["read"]["io_bytes"] += 4096  # other numbers, claimed as the same run
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(forged_doc))
    assert cli("import", str(forged))[0] == 0
    code, out, err = cli("import", str(genuine), "--json")
    assert code == 0, err
    code, out, _ = cli("show", "2", "--json")
    (warning,) = [w for w in json.loads(out)["warnings"] if w["id"] == "same-uuid-other-numbers"]
    assert (
        f"run 1 of this database claims to come from the same run (uuid {exported['uuid']})"
        in warning["message"]
    )
    # The same numbers under the same claim are the same measurement: refused.
    copied = tmp_path / "copy.json"
    copied.write_text(json.dumps(exported))
    code, _, err = cli("import", str(copied))
    assert code == 2 and "already in this database as run 2" in err


# -- the fast check of large documents agrees with jsonschema's ------------------------------


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), dates=st.booleans())
def test_the_fast_check_gives_jsonschemas_verdict_on_any_change(
    exported: Doc, data: st.DataObject, dates: bool
) -> None:
    """fastjsonschema's compiled checker (used first on documents of many results, and on
    every document once a process has checked that many results) accepts exactly what
    jsonschema accepts, however a document is changed (1-3 leaves replaced by any value:
    numbers past 64 bits, text, null, booleans, empty lists and objects)."""
    doc = _mutated(exported, data)
    assert schema.fast_valid(doc, dates=dates) == (schema.worded_problem(doc, dates=dates) is None)


def test_a_large_document_is_checked_fast_and_its_problem_still_worded(exported: Doc) -> None:
    doc = copy.deepcopy(exported)
    doc["results"] = [copy.deepcopy(doc["results"][0]) for _ in range(schema.FAST_FROM_RESULTS)]
    assert schema.check_run_document(doc) is None
    doc["results"][5]["read"]["lat_ns"]["n"] = "many"
    assert schema.check_run_document(doc) == (
        "results[5].read.lat_ns.n",
        'must be a whole number, not "many"',
    )
    doc["results"][5]["read"]["lat_ns"]["n"] = 3
    doc["results"][2]["started_at"] = "2026-02-30T10:00:00Z"  # a day that does not exist
    assert not schema.fast_valid(doc) and schema.fast_valid(doc, dates=False)
    assert schema.check_run_document(doc, dates=False) is None
    assert schema.check_run_document(doc) is not None


def test_the_checker_is_compiled_only_once_it_pays(
    exported: Doc, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiling fastjsonschema's checker costs about 0.25 s, jsonschema about 10 ms a small
    run: a process that checks a run or two (`iobench run`, `show`) never compiles it; one
    that has checked FAST_FROM_RESULTS results does, from then on."""
    monkeypatch.setattr(schema, "_CHECKED", [0])
    fast: list[object] = []

    def fast_valid(doc: object, dates: bool = True) -> bool:
        fast.append(doc)
        return True

    monkeypatch.setattr(schema, "fast_valid", fast_valid)
    doc = copy.deepcopy(exported)
    doc["results"] = doc["results"][:1]
    for _ in range(schema.FAST_FROM_RESULTS):
        assert schema.check_run_document(doc) is None
    assert fast == []
    assert schema.check_run_document(doc) is None
    assert fast == [doc]


# -- job options no job fio ran can have --------------------------------------------------------


def _import_with_options(cli: Cli, tmp_path: Path, options: dict[str, str]) -> None:
    """Import the recorded report with its job's options changed: imported (exit 0)."""
    before, doc = _fio_report()
    doc["jobs"][0]["job options"].update(options)
    path = tmp_path / "case.json"
    path.write_text(before + json.dumps(doc))
    code, _, err = cli("import", str(path))
    assert code == 0 and "internal error" not in err, err


@pytest.mark.parametrize(
    ("option", "value", "param"),
    [
        ("bs", "0", "bs"),  # fio: "min value out of range: 0 (1 min)"
        ("bs", "99999999999999999999", "bs"),  # beyond 64 bits
        ("iodepth", "0", "iodepth"),
        ("numjobs", "0", "numjobs"),  # fio runs nothing
        ("rwmixread", "150", "rwmixread"),  # fio: "max value out of range: 150 (100 max)"
        ("size", "99999999999999999999", "size"),
        ("runtime", "999999999999999999999", "runtime_s"),
        ("ramp_time", "99999999999999999999999", "ramp_s"),
    ],
)
def test_an_echoed_option_fio_refuses_is_unknown_and_the_run_reads_back(
    cli: Cli, tmp_path: Path, option: str, value: str, param: str
) -> None:
    """A fio report whose job options say what fio refuses (the file was altered): the
    figure is not known, and the run is stored as iobench reads runs (a run stored with
    bs 0 could not be shown: `run 2 ... cannot be read`)."""
    mixed = {"rw": "randrw"} if option == "rwmixread" else {}
    _import_with_options(cli, tmp_path, {option: value, **mixed})
    code, out, err = cli("show", "1", "--json")
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["params"][param] is None


@pytest.mark.parametrize("split", ["0", "0/50:4k/50", "4k/50:0/50"])
def test_a_block_size_split_with_a_size_of_zero_is_no_io_size(
    cli: Cli, tmp_path: Path, split: str
) -> None:
    """It was a division by zero where the IO count is checked against io_bytes."""
    _import_with_options(cli, tmp_path, {"bssplit": split})
    assert cli("show", "1")[0] == 0


def test_a_run_the_store_could_not_read_back_is_not_kept(
    cli: Cli, tmp_path: Path, isolated_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a reader lets through that the store refuses to read (here: a block size
    of 0 forced past the reading of the options) is refused by name, and nothing of the
    run is left in the database."""
    import iobench.importer
    from iobench.fio.options import workload_params

    def forged(options: Any) -> dict[str, Any]:
        return {**workload_params(options), "bs": 0}

    monkeypatch.setattr(iobench.importer, "workload_params", forged)
    err = _refused(cli, FIO_JSON, isolated_db)
    assert "gives a run iobench cannot store as it reads runs" in err, err
    assert "bs: 0 is out of range (minimum 1)" in err, err
    assert "nothing of it was kept" in err
