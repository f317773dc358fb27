"""Load suites from TOML: the built-in ones shipped with iobench and users' own files.

A suite file is data that ends up in a fio job file, and fio job files are code (they can
run commands, delete files and write to any device). So every key goes through a typed
allow-list: iobench's own workload fields, then a short list of safe fio options. Anything
else is refused with the reason, and every error names the file and the line of the key.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from iobench.analysis.findings import MIN_STEADY_RUNTIME_S
from iobench.errors import SuiteError, UserError
from iobench.model import Expectation, Suite, Workload
from iobench.suites.options import (
    ALIASES,
    BUILTIN_DEFAULTS,
    CORE_KEYS,
    DOCS,
    MIXED_MODES,
    NAME_RE,
    NAME_RULE,
    OPTION_KEYS,
    REQUIRED,
    TOP_KEYS,
    WORKLOAD_KEYS,
    InvalidValue,
    refusal,
    show_value,
)

DEFAULT_SUITE = "quick"
_PACKAGE = "iobench.suites"

# --- where keys are: tomllib gives no positions, so find them in the text -------------------

Section = tuple[str, int]  # ("top", 0), ("defaults", 0), ("workload", n), ("sub", 0)
_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+)\]\]?\s*(?:#.*)?$")
_KEY_RE = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*[.=]""")


class _Lines:
    """Line numbers of keys and table headers in a suite file's text."""

    def __init__(self, text: str) -> None:
        self._keys: dict[tuple[Section, str], int] = {}
        self._headers: dict[Section, int] = {}
        section: Section = ("top", 0)
        workloads = -1
        in_string: str | None = None
        for lineno, line in enumerate(text.splitlines(), start=1):
            if in_string is not None:
                if line.count(in_string) % 2 == 1:
                    in_string = None
                continue
            header = _HEADER_RE.match(line)
            if header:
                parts = [p.strip().strip("\"'") for p in header.group(2).split(".")]
                double = header.group(1) == "[["
                if parts == ["workload"] and double:
                    workloads += 1
                    section = ("workload", workloads)
                    self._headers[section] = lineno
                elif parts == ["defaults"] and not double:
                    section = ("defaults", 0)
                    self._headers[section] = lineno
                else:
                    parent: Section = ("top", 0)
                    if len(parts) > 1 and parts[0] == "workload" and workloads >= 0:
                        parent, parts = ("workload", workloads), parts[1:]
                    elif len(parts) > 1 and parts[0] == "defaults":
                        parent, parts = ("defaults", 0), parts[1:]
                    self._keys.setdefault((parent, parts[0]), lineno)
                    section = ("sub", 0)
                continue
            key = _KEY_RE.match(line)
            if key:
                name = next(g for g in key.groups() if g is not None)
                self._keys.setdefault((section, name), lineno)
            for delimiter in ('"""', "'''"):
                if line.count(delimiter) % 2 == 1:
                    in_string = delimiter
                    break

    def key(self, section: Section, key: str) -> int | None:
        """The line of ``key`` in ``section``, else the section's header line (or, for an
        inline table such as ``defaults = {...}``, the line of the key that holds it)."""
        return (
            self._keys.get((section, key))
            or self._headers.get(section)
            or self._keys.get((("top", 0), section[0]))
        )

    def header(self, section: Section) -> int | None:
        return self._headers.get(section)


# --- building a suite ------------------------------------------------------------------------

_ParsedValue = tuple[object, int | None]  # (typed value, line)


class _Builder:
    def __init__(self, data: Mapping[str, object], path: str, text: str, source: str) -> None:
        self.data = data
        self.path = path
        self.lines = _Lines(text)
        self.source = source

    def fail(self, message: str, line: int | None, hint: str | None = None) -> SuiteError:
        return SuiteError(self.path, message, line=line, hint=hint)

    def build(self) -> Suite:
        top: Section = ("top", 0)
        for key, value in self.data.items():
            line = self.lines.key(top, key)
            if key not in ("defaults", "workload"):  # tables are checked key by key below
                self.check_no_env(key, value, "", line)
            if key not in TOP_KEYS:
                raise self.unknown(key, TOP_KEYS, "", line, top_level=True)
        name = self.data.get("name")
        if name is None:
            raise self.fail('missing the suite\'s name: add name = "my-suite" at the top', None)
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise self.fail(
                f"name must be {NAME_RULE}; not {show_value(name)}", self.lines.key(top, "name")
            )
        description = self.data.get("description")
        if description is None:
            raise self.fail(
                "missing description: add one or two sentences saying what the suite measures",
                None,
            )
        if not isinstance(description, str) or not description.strip():
            raise self.fail(
                f"description must be a non-empty string, not {show_value(description)}",
                self.lines.key(top, "description"),
            )
        indicative = self.data.get("indicative", False)
        if not isinstance(indicative, bool):
            raise self.fail(
                f"indicative must be true or false, not {show_value(indicative)}",
                self.lines.key(top, "indicative"),
            )
        defaults_table = self.data.get("defaults", {})
        if not isinstance(defaults_table, dict):
            raise self.fail(
                f"defaults must be a table ([defaults] followed by key = value lines), "
                f"not {show_value(defaults_table)}",
                self.lines.key(top, "defaults"),
            )
        defaults = self.section(defaults_table, ("defaults", 0), "[defaults]: ")
        tables = self.data.get("workload")
        if tables is None:
            raise self.fail(
                "no workloads: add at least one [[workload]] table with name, rw, bs, iodepth "
                "and numjobs",
                None,
            )
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise self.fail(
                "workload must be a list of tables: start each workload with [[workload]] "
                "(double brackets)",
                self.lines.key(top, "workload"),
            )
        if not tables:
            raise self.fail("no workloads: add at least one [[workload]] table", None)
        workloads: list[Workload] = []
        seen: dict[str, int | None] = {}
        for index, table in enumerate(tables):
            workload = self.workload(index, table, defaults)
            name_line = self.lines.key(("workload", index), "name")
            if workload.name in seen:
                first = seen[workload.name]
                where = f" at line {first}" if first else ""
                raise self.fail(
                    f'workload "{workload.name}": the name is already used by the workload{where}; '
                    "names must be unique within a suite",
                    name_line,
                )
            seen[workload.name] = name_line
            workloads.append(workload)
        suite = Suite(
            name=name,
            description=" ".join(description.split()),
            workloads=tuple(workloads),
            source=self.source,
            indicative=indicative,
        )
        return dataclasses.replace(suite, expectations=self.expectations(suite))

    def expectations(self, suite: Suite) -> tuple[Expectation, ...]:
        """``expect = ["rand-r.read.iops>=5000", ...]``: parsed and checked against the
        suite's workloads, each error with the file and line."""
        from iobench.expect import check_against_suite, parse_expectation

        texts = self.data.get("expect", [])
        line = self.lines.key(("top", 0), "expect")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise self.fail(
                f"expect must be a list of strings, not {show_value(texts)}",
                line,
                'e.g. expect = ["rand-r.read.iops>=5000", "lat-read.read.p99<5ms"]',
            )
        out = []
        for text in texts:
            try:
                e = parse_expectation(text, "expect", source="suite")
                check_against_suite([e], suite, "expect")
            except UserError as err:
                raise self.fail(err.message, line, err.hint) from err
            out.append(e)
        return tuple(out)

    def check_no_env(self, key: str, value: object, where: str, line: int | None) -> None:
        if isinstance(value, str) and "${" in value:
            raise self.fail(
                f'{where}{key}: "${{" is refused: fio would replace ${{VAR}} with an environment '
                f"variable, which can leak secrets into stored results ({show_value(value)})",
                line,
            )
        if isinstance(value, list):
            for item in value:
                self.check_no_env(key, item, where, line)
        if isinstance(value, dict):
            for sub_key, item in value.items():
                self.check_no_env(f"{key}.{sub_key}", item, where, line)

    def unknown(
        self,
        key: str,
        allowed: tuple[str, ...],
        where: str,
        line: int | None,
        *,
        top_level: bool = False,
    ) -> SuiteError:
        reason = refusal(key)
        if reason is not None:
            return self.fail(f"{where}{key} is refused: {reason}", line, hint=f"See {DOCS}.")
        if top_level and key in WORKLOAD_KEYS:
            return self.fail(
                f"{key} is a workload key: put it in [defaults] (for every workload) or in a "
                "[[workload]] table",
                line,
            )
        if key in ALIASES:
            return self.fail(f'{where}unknown key "{key}": iobench calls it {ALIASES[key]}', line)
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        suggestion = f'; did you mean "{close[0]}"?' if close else ""
        return self.fail(
            f'{where}unknown key "{key}"{suggestion} ({DOCS} lists every accepted key)', line
        )

    def section(
        self, table: Mapping[str, object], section: Section, where: str
    ) -> dict[str, _ParsedValue]:
        """Check every key of a [defaults] or [[workload]] table, in file order."""
        parsed: dict[str, _ParsedValue] = {}
        for key, value in table.items():
            line = self.lines.key(section, key)
            self.check_no_env(key, value, where, line)
            if key == "name":
                if section[0] == "defaults":
                    raise self.fail(
                        f"{where}name belongs in each [[workload]], not in [defaults]", line
                    )
                continue
            parser = CORE_KEYS.get(key) or OPTION_KEYS.get(key)
            if parser is None:
                raise self.unknown(
                    key,
                    WORKLOAD_KEYS[1:] if section[0] == "defaults" else WORKLOAD_KEYS,
                    where,
                    line,
                )
            try:
                parsed[key] = (parser(key, value), line)
            except InvalidValue as e:
                raise self.fail(f"{where}{e}", line) from None
        return parsed

    def workload(
        self, index: int, table: Mapping[str, object], defaults: Mapping[str, _ParsedValue]
    ) -> Workload:
        section: Section = ("workload", index)
        header = self.lines.header(section)
        name = table.get("name")
        if name is None:
            raise self.fail(
                f'workload #{index + 1}: missing name, e.g. name = "randread-4k"', header
            )
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            self.check_no_env(
                "name", name, f"workload #{index + 1}: ", self.lines.key(section, "name")
            )
            raise self.fail(
                f"workload #{index + 1}: name must be {NAME_RULE}; not {show_value(name)}",
                self.lines.key(section, "name"),
            )
        if name.lower() == "global":
            raise self.fail(
                f'workload #{index + 1}: the name "{name}" is fio\'s section for shared '
                "options; choose another name",
                self.lines.key(section, "name"),
            )
        where = f'workload "{name}": '
        merged = {**defaults, **self.section(table, section, where)}
        for key in REQUIRED:
            if key not in merged:
                raise self.fail(
                    f"{where}missing {key} (set it in the workload or in [defaults])", header
                )

        def get(key: str) -> object:
            return merged[key][0] if key in merged else BUILTIN_DEFAULTS[key]

        def get_int(key: str) -> int:
            value = get(key)
            assert isinstance(value, int)
            return value

        def get_float(key: str) -> float:
            value = get(key)
            assert isinstance(value, int | float)
            return float(value)

        rw = str(get("rw"))
        if "rwmixread" in merged and rw not in MIXED_MODES:
            raise self.fail(
                f"{where}rwmixread only applies to mixed reads and writes "
                f'(rw = "randrw", "rw" or "readwrite"), not rw = {show_value(rw)}',
                merged["rwmixread"][1],
            )
        bs, size = get_int("bs"), get_int("size")
        if size < bs:
            line = merged["size"][1] if "size" in merged else merged["bs"][1]
            raise self.fail(
                f"{where}size ({size} bytes) must be at least bs ({bs} bytes)", line or header
            )
        options: list[tuple[str, str]] = []
        for key, (value, _line) in merged.items():
            if key in OPTION_KEYS:
                options.append((key, str(value)))
            elif key == "time_based" and value is False:
                # Not a Workload field: iobench's job builder reads it from the options.
                options.append(("time_based", "0"))
        rwmixread = get_int("rwmixread") if "rwmixread" in merged else None
        return Workload(
            name=name,
            rw=rw,
            bs=bs,
            iodepth=get_int("iodepth"),
            numjobs=get_int("numjobs"),
            ioengine=str(get("ioengine")),
            direct=get("direct") is True,
            runtime_s=get_float("runtime"),
            ramp_s=get_float("ramp"),
            size=size,
            rwmixread=rwmixread,
            options=tuple(options),
        )


# --- public API --------------------------------------------------------------------------


def parse_suite(text: str, path: str, source: str) -> Suite:
    """Validate suite TOML ``text``; errors name ``path`` and the line of the offending key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        line = int(m.group(1)) if m else None
        if m:
            message = f"{message[: m.start()]} (column {m.group(2)})"
        raise SuiteError(path, f"not valid TOML: {message}", line=line) from None
    return _Builder(data, path, text, source).build()


def builtin_names() -> list[str]:
    """The names of the suites shipped with iobench, sorted."""
    files = resources.files(_PACKAGE)
    return sorted(f.name.removesuffix(".toml") for f in files.iterdir() if f.name.endswith(".toml"))


def load_builtin(name: str) -> Suite:
    """A built-in suite by name (see :func:`builtin_names`)."""
    if name not in builtin_names():
        raise UserError(
            f'unknown built-in suite "{name}"; built-in suites: {", ".join(builtin_names())}'
        )
    resource = resources.files(_PACKAGE) / f"{name}.toml"
    return parse_suite(resource.read_text(encoding="utf-8"), f"builtin:{name}.toml", "builtin")


def load_suite_file(path: str | Path) -> Suite:
    """A user's suite file; ``Suite.source`` is the path as given."""
    shown = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise SuiteError(shown, "no such file") from None
    except IsADirectoryError:
        raise SuiteError(shown, "is a directory, not a suite file") from None
    except OSError as e:
        raise SuiteError(shown, f"cannot be read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SuiteError(shown, "is not UTF-8 text; suite files are TOML") from None
    return parse_suite(text, shown, shown)


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a suite file by path (anything with a '/' or '.toml')."""
    if name_or_path in builtin_names():
        return load_builtin(name_or_path)
    path = Path(name_or_path)
    if path.is_file() or "/" in name_or_path or name_or_path.endswith(".toml"):
        return load_suite_file(name_or_path)
    raise UserError(
        f'unknown suite "{name_or_path}": not a built-in suite and not a file; '
        f"built-in suites: {', '.join(builtin_names())}",
        hint=f"Or give the path of a .toml suite file ({DOCS} describes the format).",
    )


def apply_overrides(
    suite: Suite,
    *,
    runtime_s: float | None = None,
    size: int | None = None,
    ramp_s: float | None = None,
) -> Suite:
    """A copy of ``suite`` with runtime, size and/or ramp replaced in every workload."""
    if runtime_s is not None and (not math.isfinite(runtime_s) or runtime_s <= 0):
        raise UserError(f"runtime must be longer than 0 seconds, not {runtime_s:g}")
    if ramp_s is not None and (not math.isfinite(ramp_s) or ramp_s < 0):
        raise UserError(f"ramp must be 0 seconds or longer, not {ramp_s:g}")
    if size is not None:
        if isinstance(size, bool) or size <= 0:
            raise UserError(f"size must be at least 1 byte, not {size}")
        small = [w.name for w in suite.workloads if w.bs > size]
        if small:
            raise UserError(
                f"size {size} bytes is smaller than the block size of {', '.join(small)}"
            )

    def override(w: Workload) -> Workload:
        return dataclasses.replace(
            w,
            runtime_s=w.runtime_s if runtime_s is None else float(runtime_s),
            ramp_s=w.ramp_s if ramp_s is None else float(ramp_s),
            size=w.size if size is None else int(size),
        )

    # A suite that is indicative because its runs are short stops being so when the user
    # gives a runtime long enough for steady state.
    indicative = suite.indicative and (runtime_s is None or runtime_s < MIN_STEADY_RUNTIME_S)
    return dataclasses.replace(
        suite, workloads=tuple(override(w) for w in suite.workloads), indicative=indicative
    )
