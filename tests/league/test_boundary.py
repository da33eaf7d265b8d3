"""The league package stays pure: no Ray, no runtime, no services."""

from __future__ import annotations

import ast
from pathlib import Path

LEAGUE = Path(__file__).resolve().parents[2] / "msagent" / "league"
FORBIDDEN = ("ray", "msagent.runtime", "msagent.services")


def _forbidden_imports(path: Path) -> list[str]:
    """Modules imported by ``path`` that the league must not import."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
        found += [n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN)]
    return found


def test_no_league_module_imports_ray_runtime_or_services() -> None:
    modules = sorted(LEAGUE.rglob("*.py"))
    assert len(modules) >= 8
    offenders = {str(p.name): bad for p in modules if (bad := _forbidden_imports(p))}
    assert offenders == {}


def test_the_check_itself_detects_forbidden_imports(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import ray.util\nfrom msagent.runtime import Solver\n"
                   "from msagent.services.learner import x\nimport msagent.vocabulary\n")
    assert _forbidden_imports(bad) == ["ray.util", "msagent.runtime", "msagent.services.learner"]


def test_no_psro_module_imports_ray_runtime_services_or_train() -> None:
    psro = LEAGUE.parent / "psro"
    modules = sorted(psro.rglob("*.py"))
    assert len(modules) >= 8
    found = {p.name: [n for n in _forbidden_imports(p)] +
             [n for n in _imports_of(p) if n.startswith("msagent.train")] for p in modules}
    assert {k: v for k, v in found.items() if v} == {}


def _imports_of(path: Path) -> list[str]:
    """Every absolute module ``path`` imports."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            out.append(node.module or "")
    return out
