"""fio's option set as the fio that runs the jobs knows it: every option name, its aliases,
the I/O engines built into it and each engine's own options (docs/suites.md, "fio's options").

Derived from fio itself, never listed by hand: ``fio --cmdhelp=all`` names the options,
``fio --cmdhelp=NAME`` says which option an alias stands for (``nr_files`` -> ``nrfiles``),
``fio --enghelp`` lists the engines this fio was built with and ``fio --enghelp=ENGINE``
their options (``io_uring``'s ``hipri``, ``rbd``'s ``pool``). Asking fio costs about 50 ms
a question, so:

- the answers of fio 3.33 (the Debian package these machines and CI have) are shipped
  beside this module (``catalogue-3.33.json``, written by ``scripts/fio-catalogue`` from
  that fio; a test checks it still says what the installed fio says);
- for another version, iobench asks that fio once for the names and the engines, and for an
  alias or an engine's options only when a job file uses them; the answers are kept for the
  life of the process.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from iobench.errors import IobenchError
from iobench.fio.runner import find_fio, fio_help

SHIPPED_VERSION = "3.33"
SHIPPED = f"catalogue-{SHIPPED_VERSION}.json"

_LINE = re.compile(r"^ *([A-Za-z0-9_.-]+) *: ")
_ALIAS = re.compile(r"^ *alias: *(\S+)", re.M)
_HEAD = re.compile(r"^ *([A-Za-z0-9_.-]+): ", re.M)


def option_names(cmdhelp_all: str) -> list[str]:
    """The options ``fio --cmdhelp=all`` lists (nested ones too), in its order."""
    return [m.group(1) for line in cmdhelp_all.splitlines() if (m := _LINE.match(line))]


def engine_names(enghelp: str) -> list[str]:
    """The engines ``fio --enghelp`` lists ("Available IO engines:" then one a line)."""
    lines = enghelp.splitlines()
    return [line.strip() for line in lines[1:] if line.strip() and " " not in line.strip()]


def canonical_in(cmdhelp_one: str) -> tuple[str | None, list[str]]:
    """(the option, its aliases) from ``fio --cmdhelp=NAME``; (None, []) for "No such
    command"."""
    head = _HEAD.search(cmdhelp_one)
    if head is None:
        return None, []
    aliases = [a for m in _ALIAS.finditer(cmdhelp_one) for a in m.group(1).split(",") if a]
    return head.group(1), aliases


@dataclass
class Catalogue:
    """What one fio knows. ``ask`` (``fio`` with arguments, its output) answers what the
    shipped data does not; None when there is nobody to ask."""

    version: str
    options: frozenset[str]
    aliases: dict[str, str]  # alias -> option
    engines: frozenset[str]
    engine_options: dict[str, frozenset[str]] = field(default_factory=dict)
    ask: object = None  # Callable[[list[str]], str] | None; kept untyped for dataclass eq
    shipped: bool = False
    fio: str | None = None  # the fio that answers (its path); None: no fio here
    _unknown: set[str] = field(default_factory=set)

    def canonical(self, name: str) -> str | None:
        """The option ``name`` is (itself, or what it is an alias of); None when this fio
        has no such option."""
        if name in self.options:
            return name
        if name in self.aliases:
            return self.aliases[name]
        if self.shipped or self.ask is None or name in self._unknown or not _plain(name):
            return None
        found, aliases = canonical_in(self._ask(["--cmdhelp=" + name]))
        if found is None or found not in self.options:
            self._unknown.add(name)
            return None
        for alias in aliases:
            self.aliases[alias] = found
        return found if name in (found, *aliases) else None

    def engine_option(self, name: str, engines: Iterable[str]) -> str | None:
        """The first of ``engines`` that has the option ``name``, else None."""
        for engine in engines:
            if name in self.options_of(engine):
                return engine
        return None

    def options_of(self, engine: str) -> frozenset[str]:
        """An engine's own options (empty for an engine this fio does not have)."""
        if engine in self.engine_options:
            return self.engine_options[engine]
        found: frozenset[str] = frozenset()
        if engine in self.engines and self.ask is not None and not self.shipped:
            found = frozenset(option_names(self._ask(["--enghelp=" + engine])))
        self.engine_options[engine] = found
        return found

    def names_like(self, name: str) -> list[str]:
        """fio's option names (and aliases) a mistyped ``name`` may have meant, for a
        suggestion (``openfile`` -> ``openfiles``)."""
        pool = [*self.options, *self.aliases]
        return difflib.get_close_matches(name, pool, n=3, cutoff=0.75)

    def _ask(self, args: list[str]) -> str:
        assert callable(self.ask)
        text: str = self.ask(args)
        return text


def _plain(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name))


def shipped() -> Catalogue:
    """fio 3.33's answers, as shipped."""
    data = json.loads(resources.files("iobench.fio").joinpath(SHIPPED).read_text("utf-8"))
    return Catalogue(
        version=data["fio_version"],
        options=frozenset(data["options"]),
        aliases=dict(data["aliases"]),
        engines=frozenset(data["engines"]),
        engine_options={e: frozenset(o) for e, o in data["engine_options"].items()},
        shipped=True,
    )


@functools.lru_cache(maxsize=8)
def for_fio(path: str, version: str) -> Catalogue:
    """The catalogue of the fio at ``path`` (version ``version``): the shipped one for fio
    3.33, else asked of that fio (its names and engines now, the rest when needed)."""
    if version == SHIPPED_VERSION:
        return dataclasses.replace(shipped(), fio=path)
    ask = functools.partial(fio_help, path)
    names = option_names(ask(["--cmdhelp=all"]))
    engines = engine_names(ask(["--enghelp"]))
    if not names:  # not an fio that answers: fio 3.33's names are the best guess
        return shipped()
    return Catalogue(
        version=version,
        options=frozenset(names),
        aliases={},
        engines=frozenset(engines),
        ask=ask,
        fio=path,
    )


def catalogue_document(c: Catalogue, aliases: Mapping[str, str]) -> dict[str, object]:
    """The shipped file's content (``scripts/fio-catalogue``)."""
    return {
        "fio_version": c.version,
        "options": sorted(c.options),
        "aliases": dict(sorted(aliases.items())),
        "engines": sorted(c.engines),
        "engine_options": {e: sorted(c.options_of(e)) for e in sorted(c.engines)},
    }


def current() -> Catalogue:
    """The catalogue of the fio on PATH; fio 3.33's when there is none (a suite can be
    checked on a host without fio: it is checked again where it runs)."""
    path = shutil.which("fio")
    if path is None:
        return shipped()
    try:
        stamp = Path(path).stat().st_mtime_ns
    except OSError:
        return shipped()
    return _current(path, stamp)


@functools.lru_cache(maxsize=4)
def _current(path: str, stamp: int) -> Catalogue:
    try:
        fio = find_fio()
    except IobenchError:
        return shipped()
    return for_fio(fio.path, fio.version)
