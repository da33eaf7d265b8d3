"""Architecture rules on the import graph of msagent: no two modules import each other, even
through others, and no layer imports a layer above it.

Every ``import`` counts, at module level or inside a function (a deferred import still ties
the two modules together); only imports under ``if TYPE_CHECKING:`` are left out, since they
never run. Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``: those implicit
edges are left out, else every module would depend on ``msagent/__init__``.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "msagent"

LAYERS: list[set[str]] = [
    # the top-level modules and subpackages of msagent, bottom to top: a module may import its
    # own layer and those below it. "msagent" is the package's __init__ (the public facade).
    {"errors", "vocabulary", "credentials", "algorithm_ranges", "algorithm_config", "version",
     "script_loader", "exits"},                           # foundation: plain values
    {"policy", "buffer", "model_pool", "rundir", "experience"},  # pure libraries ...
    {"envs"},
    {"user_scripts", "telemetry", "callbacks"},  # callbacks: the user's hooks
    {"psro"},
    {"league"},                                           # ... that know nothing of the runtime
    {"league_db"},                                        # the league's history in SQL
    {"runtime"},                                          # register, Solver, pub/sub; Ray only here
    {"msagent"},                                          # the facade: the runtime's API
    {"config"},                                           # typed settings of everything below
    {"evaluate", "validate_env", "preflight", "client", "league_history"},  # reading runs, checking scripts
    {"exporting"},                                        # ONNX, tabular policies, model store
    {"services"},                                         # the @register classes (publish ONNX)
    {"gateway"},                                          # HTTP gateway (serves the model store)
    {"dashboard"},                                        # served with the gateway's limits
    {"train"},                                            # wires services into a run
    {"exploit"},                                          # best responses to a run's players
    {"cli", "__main__", "league_command"},
]

# Known exceptions, each to be removed by the change that names it (none today)
ALLOWED_CYCLES: list[set[str]] = []
ALLOWED_UPWARD: set[tuple[str, str]] = set()


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package (an ``__init__`` names its package), by dotted name."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[:2] == ("dashboard", "static"):  # the page's assets, not Python modules
            continue
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        out[".".join((package, *parts))] = path
    return out


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes that run: the bodies of ``if TYPE_CHECKING:`` are skipped (not their else)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name lives in: itself, or the nearest enclosing module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.AST, module: str, is_package: bool,
             modules: dict[str, Path]) -> Iterator[str | None]:
    """The modules one import statement loads (``from pkg import name``: ``pkg.name`` when
    that is a module, else ``pkg``)."""
    if isinstance(node, ast.Import):
        yield from (_owner(alias.name, modules) for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
        for alias in node.names:
            full = f"{base}.{alias.name}"
            yield full if full in modules else _owner(base, modules)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """module -> the package's modules it imports (module level and deferred)."""
    modules = module_names(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        found = {t for node in _runtime_nodes(tree)
                 for t in _targets(node, name, path.name == "__init__.py", modules)}
        graph[name] = {t for t in found if t is not None and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]],
               allowed: Sequence[set[str]] = ()) -> list[str] | None:
    """One import cycle (its modules, the first repeated at the end), or None; edges inside an
    allowed set are left out. graphlib finds it: no hand-written graph search."""
    kept = {m: {t for t in ts if not any({m, t} <= group for group in allowed)}
            for m, ts in graph.items()}
    try:
        graphlib.TopologicalSorter(kept).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def top_level(module: str) -> str:
    """The top-level module or subpackage a module belongs to ("msagent" for the __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward_edges(graph: dict[str, set[str]], layers: list[set[str]]) -> list[tuple[str, str]]:
    """Imports from a lower layer to a higher one."""
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    return sorted((m, t) for m, ts in graph.items() for t in ts
                  if rank[top_level(m)] < rank[top_level(t)])


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """msagent's import graph."""
    return import_graph(PACKAGE, "msagent")


def test_no_import_cycle_between_modules(graph: dict[str, set[str]]) -> None:
    cycle = find_cycle(graph, ALLOWED_CYCLES)
    assert cycle is None, f"import cycle: {' -> '.join(cycle or [])}"


def test_no_layer_imports_a_layer_above_it(graph: dict[str, set[str]]) -> None:
    upward = [f"{m} -> {t}" for m, t in upward_edges(graph, LAYERS)
              if (m, t) not in ALLOWED_UPWARD]
    assert upward == [], "imports of a higher layer (see LAYERS):\n" + "\n".join(upward)


def test_every_top_level_module_is_in_exactly_one_layer(graph: dict[str, set[str]]) -> None:
    placed = [name for layer in LAYERS for name in layer]
    assert len(placed) == len(set(placed)), "a name is in two layers"
    assert {top_level(m) for m in graph} == set(placed)


def test_allow_lists_are_not_stale(graph: dict[str, set[str]]) -> None:
    """An allowed cycle or edge that is gone must leave the allow-list (it would hide a new one)."""
    for group in ALLOWED_CYCLES:
        inside = {m: graph[m] & group for m in group}
        assert find_cycle(inside) is not None, f"no cycle among {sorted(group)}: delete it"
    gone = [edge for edge in ALLOWED_UPWARD if edge[1] not in graph.get(edge[0], set())]
    assert gone == [], f"allowed upward imports that are gone (delete them): {gone}"


def _write(root: Path, files: dict[str, str]) -> Path:
    """A package of the given files (path -> source) under ``root/pkg``."""
    for rel, source in files.items():
        path = root / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root / "pkg"


def test_the_checker_finds_a_deferred_cycle_and_an_upward_import(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from pkg.low import b\n",       # deferred: still counts
        "low/b.py": "from . import a\n",                             # relative
        "low/c.py": "from ..high import d\n",                        # upward
        "high/__init__.py": "",
        "high/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    import pkg.high.e\nelse:\n    import pkg.low.b\n",
        "high/e.py": "import pkg.high.d\n",
    })
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.low.a"] == {"pkg.low.b"} and graph["pkg.low.b"] == {"pkg.low.a"}
    assert graph["pkg.high.d"] == {"pkg.low.b"}  # the TYPE_CHECKING import is left out
    assert set(find_cycle(graph) or []) == {"pkg.low.a", "pkg.low.b"}
    assert upward_edges(graph, [{"low"}, {"high"}]) == [("pkg.low.c", "pkg.high.d")]
    assert find_cycle(graph, [{"pkg.low.a", "pkg.low.b"}]) is None


def test_from_package_import_name_points_at_the_module_or_the_package(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "__init__.py": "X = 1\n",
        "sub/__init__.py": "from pkg import X\nfrom pkg.sub import mod, helper\n",
        "sub/mod.py": "def helper():\n    pass\n",
    })
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.sub"] == {"pkg", "pkg.sub.mod"}  # helper is a name in pkg.sub: itself
