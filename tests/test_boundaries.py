"""Architecture rules: only the runtime package imports Ray; importing msagent loads no Ray."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "msagent"


def _imports_ray(path: Path) -> bool:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "ray" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ray":
            return True
    return False


def test_only_the_runtime_package_imports_ray() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if "runtime" not in p.relative_to(PACKAGE).parts and _imports_ray(p)]
    assert offenders == []


def test_the_check_itself_detects_a_ray_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from ray import util\n")
    assert _imports_ray(bad)


def test_importing_msagent_and_using_inline_does_not_load_ray() -> None:
    code = ("import sys, msagent\n"
            "msagent.init(backend='inline')\n"
            "class W:\n"
            "    @msagent.register\n"
            "    def f(self, x): return x\n"
            "msagent.launch(W)\n"
            "assert msagent.Solver().retrieve(W, 'f', 3) == 3\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def test_no_subpackage_shadows_a_name_msagent_exports():
    """``import msagent.x`` sets ``msagent.x``: a subpackage named like an exported function
    (``publish``) would replace it for everyone once imported."""
    import pkgutil

    import msagent

    subpackages = {m.name for m in pkgutil.iter_modules(msagent.__path__)}
    assert not subpackages & set(msagent.__all__)


MAX_MODULE_LINES = 400
"""The house's budget for one module (issue 53): past it, a module holds more than one job."""


def test_no_module_is_over_its_line_budget() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines())
             for p in PACKAGE.rglob("*.py") if "static" not in p.parts}
    long = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert long == {}, f"split these modules (over {MAX_MODULE_LINES} lines): {long}"
