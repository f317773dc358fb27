"""The shape of the code, read with ast from src/iobench (pure: imports nothing of iobench).

- No function or method is longer than MAX_LINES (def line to last line), except flat rule
  tables, each allowed by name with the reason.
- No import cycle between iobench modules, counting every import: at module level and in
  functions, but not under ``if TYPE_CHECKING:``.
- The packages (and top-level modules) stand in LAYERS, lowest first: each imports only
  from layers below its own, counting every import, those under ``if TYPE_CHECKING:`` too
  (a type from a higher layer is knowledge of it all the same).
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "iobench"

MAX_LINES = 80

# Flat tables of independent rules: splitting them would only scatter the rules.
RULE_TABLES = {
    "iobench.targets.guard.refusals": (
        "one `if fact: append(Refusal(...))` per reason not to write to a device"
    ),
    "iobench.analysis.findings._target_findings": (
        "one `if fact: append(Finding(...))` per thing the target is (throttled, RAM, ...)"
    ),
}


# Lowest first. A package imports only from packages of lower layers (and from itself);
# two packages of one layer do not import each other. A new package or top-level module
# gets a place here.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("iobench", "errors", "units", "jsontext", "cpus", "model"),  # import nothing of iobench
    ("records", "invoker", "output"),  # stored rows, running a command, the terminal
    ("probe",),  # reading /proc, /sys and the host
    ("targets",),  # what a target is, resolved and checked
    ("fio",),  # fio's language, job files, running and parsing fio
    ("iocount",),  # counting IOs from fio's output
    ("documents",),  # the JSON documents' envelopes, the run document, its schema
    ("analysis",),  # pure computation over stored runs
    ("expect", "metrics", "specs"),  # expectations, stored metrics, provider specs
    ("suites",),  # suites and job files read and checked
    ("store", "clients"),  # SQLite; fio servers
    ("engine",),  # running a suite: preflight, local and clients execution
    ("report",),  # terminal, Markdown, HTML and printed documents
    ("export", "importer"),  # whole commands' work, above the report
    ("cli",),  # the commands: the only printing
    ("__main__",),
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # read once a process: every test here walks the same trees, none changes them
def _modules() -> dict[str, tuple[Path, ast.Module]]:
    return {
        _module_name(path): (path, ast.parse(path.read_text(), filename=str(path)))
        for path in sorted((SRC / PACKAGE).rglob("*.py"))
    }


def _functions(tree: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
    """Every function and method, nested ones too, by dotted name (module.Class.method)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}.{node.name}", node
            yield from _functions(node, f"{prefix}.{node.name}")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}.{node.name}")
        else:
            yield from _functions(node, prefix)


def _lengths() -> dict[str, tuple[int, str]]:
    """Function name -> (lines, file:line)."""
    out = {}
    for module, (path, tree) in _modules().items():
        for name, node in _functions(tree, module):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            assert node.end_lineno is not None
            where = f"{path.relative_to(SRC.parent)}:{node.lineno}"
            out[name] = (node.end_lineno - node.lineno + 1, where)
    return out


def test_no_function_over_max_lines() -> None:
    lengths = _lengths()
    allowed = RULE_TABLES.keys()
    too_long = [
        f"{where} {name}: {lines} lines"
        for name, (lines, where) in sorted(lengths.items())
        if lines > MAX_LINES and name not in allowed
    ]
    assert not too_long, (
        f"functions over {MAX_LINES} lines (split them into pieces that each do one thing; "
        "a flat table of rules may be allowed in RULE_TABLES, with the reason):\n  "
        + "\n  ".join(too_long)
    )


def test_allowed_long_functions_exist_and_are_long() -> None:
    """An allowance that no longer applies (renamed, split, shortened) is removed."""
    lengths = _lengths()
    stale = [
        name for name in sorted(RULE_TABLES) if name not in lengths or lengths[name][0] <= MAX_LINES
    ]
    assert not stale, f"no longer needed in RULE_TABLES: {', '.join(stale)}"


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, skipping the body of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _type_checking(child.test):
            yield from _imports(ast.Module(body=child.orelse, type_ignores=[]))
        else:
            yield from _imports(child)


def _imported(
    module: str, is_package: bool, stmt: ast.Import | ast.ImportFrom, known: set[str]
) -> Iterator[str]:
    """The iobench modules one import statement imports."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.name in known:
                yield alias.name
        return
    base = stmt.module or ""
    if stmt.level:  # relative: from . import x, from ..y import z
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(stmt.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    for alias in stmt.names:
        sub = f"{base}.{alias.name}"
        if sub in known:
            yield sub
        elif base in known:
            yield base


def import_graph(*, type_checking: bool = False) -> dict[str, dict[str, list[str]]]:
    """Module -> imported module -> where (file:line), between iobench modules; with
    ``type_checking``, the imports under ``if TYPE_CHECKING:`` too."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, dict[str, list[str]]] = {m: {} for m in modules}
    for module, (path, tree) in modules.items():
        stmts = (
            (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))
            if type_checking
            else _imports(tree)
        )
        for stmt in stmts:
            for target in _imported(module, path.name == "__init__.py", stmt, known):
                if target == module:
                    continue
                where = f"{path.relative_to(SRC.parent)}:{stmt.lineno}"
                wheres = graph[module].setdefault(target, [])
                if where not in wheres:  # one statement may import several names
                    wheres.append(where)
    return graph


def _components(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _shortest_cycle(
    graph: dict[str, dict[str, list[str]]], start: str, within: set[str]
) -> list[str]:
    """The shortest import cycle through ``start`` inside one component."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                return [*paths[v], start]
            if w in within and w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    raise AssertionError(f"{start} is in a component but on no cycle")


def describe_cycles(graph: dict[str, dict[str, list[str]]]) -> list[str]:
    """Per component: one shortest cycle through each module, with where each import is."""
    out = []
    for component in _components(graph):
        within = set(component)
        seen: set[tuple[str, ...]] = set()
        lines = [f"modules in a cycle: {', '.join(component)}"]
        for start in component:
            cycle = _shortest_cycle(graph, start, within)
            # Each cycle once, told from its smallest module.
            turn = cycle.index(min(cycle[:-1]))
            cycle = cycle[turn:-1] + cycle[:turn] + [cycle[turn]]
            if tuple(cycle) in seen:
                continue
            seen.add(tuple(cycle))
            steps = [f"{a} -> {b} ({', '.join(graph[a][b])})" for a, b in itertools.pairwise(cycle)]
            lines.append("  cycle: " + "; ".join(steps))
        out.append("\n".join(lines))
    return out


def test_no_import_cycle() -> None:
    cycles = describe_cycles(import_graph())
    assert not cycles, "import cycles between iobench modules:\n" + "\n".join(cycles)


def test_import_graph_sees_every_kind_of_import() -> None:
    """Imports inside functions count, `from package import module` is the module, and
    `if TYPE_CHECKING:` is skipped: the cycle test cannot pass by missing an edge."""
    graph = import_graph()  # the real one is read at all: src/iobench is where it looks
    assert len(graph) > 50 and sum(len(edges) for edges in graph.values()) > 200
    tree = ast.parse(
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "import iobench.d\n"
        "if TYPE_CHECKING:\n    from iobench import a\nelse:\n    from iobench.e import x\n"
        "def f():\n    from iobench.b import thing\n"
        "class C:\n    def m(self):\n        from . import c\n"
        "from iobench import name_in_init\n"
        "from ..pkg import sub\n"
    )
    known = {"iobench", "iobench.a", "iobench.b", "iobench.c", "iobench.d", "iobench.e",
             "iobench.pkg", "iobench.pkg.sub", "iobench.pkg.m"}  # fmt: skip
    found = [t for stmt in _imports(tree) for t in _imported("iobench.pkg.m", False, stmt, known)]
    assert found == [
        "iobench.d", "iobench.e", "iobench.b", "iobench.pkg", "iobench", "iobench.pkg.sub"
    ]  # fmt: skip
    # (from . import c in iobench.pkg.m is iobench.pkg's c: not known, so the package.)


def test_cycles_are_found_and_described() -> None:
    graph = {
        "a": {"b": ["a.py:1"]},
        "b": {"c": ["b.py:2"], "a": ["b.py:3"]},
        "c": {"a": ["c.py:4"]},
        "d": {"a": ["d.py:5"]},
    }
    assert _components(graph) == [["a", "b", "c"]]
    (text,) = describe_cycles(graph)
    assert text.splitlines() == [
        "modules in a cycle: a, b, c",
        "  cycle: a -> b (a.py:1); b -> a (b.py:3)",
        "  cycle: a -> b (a.py:1); b -> c (b.py:2); c -> a (c.py:4)",
    ]


def _package(module: str) -> str:
    """iobench.fio.jobfile -> fio; iobench.units -> units; iobench -> iobench."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward_imports(
    graph: dict[str, dict[str, list[str]]], layers: tuple[tuple[str, ...], ...]
) -> list[str]:
    """Each import of a package from its own layer or a higher one, with where it is."""
    rank = {package: i for i, layer in enumerate(layers) for package in layer}
    out = []
    for module, edges in sorted(graph.items()):
        for target, wheres in sorted(edges.items()):
            a, b = _package(module), _package(target)
            if a != b and rank[b] >= rank[a]:
                way = "sideways" if rank[b] == rank[a] else "upwards"
                out += [
                    f"{where} {module} imports {target} ({a} -> {b}: {way})" for where in wheres
                ]
    return out


def test_every_package_has_a_layer() -> None:
    placed = [package for layer in LAYERS for package in layer]
    packages = {_package(module) for module in _modules()}
    assert not packages - set(placed), (
        f"packages without a layer in LAYERS: {packages - set(placed)}"
    )
    assert not set(placed) - packages, f"LAYERS names what is gone: {set(placed) - packages}"
    assert len(placed) == len(set(placed)), "a package in two layers"


def test_imports_run_downwards() -> None:
    upward = upward_imports(import_graph(type_checking=True), LAYERS)
    assert not upward, (
        "imports from the same or a higher layer (LAYERS in tests/test_structure.py; move "
        "what is imported down, or the importer up):\n  " + "\n  ".join(upward)
    )


def test_layers_count_type_only_imports() -> None:
    """engine.steps imports fio.runner under `if TYPE_CHECKING:` only: the layer check
    sees it, the cycle check does not."""
    steps = "iobench.engine.steps"
    assert "iobench.fio.runner" in import_graph(type_checking=True)[steps]
    assert "iobench.fio.runner" not in import_graph()[steps]


def test_upward_imports_are_found() -> None:
    graph = {
        "iobench.fio.jobfile": {"iobench.engine.steps": ["fio/j.py:9"], "iobench": ["x:1"]},
        "iobench.engine.steps": {"iobench.fio.runner": ["engine/steps.py:3"]},
        "iobench.fio.runner": {"iobench.fio.jobfile": ["fio/runner.py:5"]},
        "iobench.store": {"iobench.clients": ["store/__init__.py:7"]},
        "iobench.clients": {},
        "iobench": {},
    }
    layers = (("iobench",), ("fio",), ("store", "clients"), ("engine",))
    assert upward_imports(graph, layers) == [
        "fio/j.py:9 iobench.fio.jobfile imports iobench.engine.steps (fio -> engine: upwards)",
        "store/__init__.py:7 iobench.store imports iobench.clients (store -> clients: sideways)",
    ]
