"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link or anchor
fails it), its configuration reference lists every key of every config model, and the README
stays a short front page whose links all lead to files that exist.

The build is a real ``mkdocs`` process on the repository's own ``mkdocs.yml``; the keys are
walked here from the pydantic models themselves, not taken from the generator.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from msagent.config import TrainConfig
from msagent.config.gateway import GatewayConfig

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 500
BUILD_TIMEOUT_S = 300
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The site built strictly into a temporary folder, and what the build printed."""
    if any(importlib.util.find_spec(name) is None for name in ("mkdocs", "material", "griffe")):
        pytest.skip("the docs tools are not installed: pip install -e '.[docs]' "
                    "(scripts/setup.sh installs them)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's end-of-life banner
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{log[-6000:]}"
    return out, log


def test_site_builds_strictly_without_warnings(site: tuple[Path, str]) -> None:
    """CI's build: strict mode, no warning printed, the front page and the reference made."""
    out, log = site
    assert "WARNING" not in log, log
    assert (out / "index.html").is_file()
    assert (out / "reference" / "configuration" / "index.html").is_file()


def test_reference_lists_every_config_key(site: tuple[Path, str]) -> None:
    """Every field of every section of TrainConfig and GatewayConfig is in the reference."""
    out, _ = site
    page = (out / "reference" / "configuration" / "index.html").read_text()
    keys = [*model_keys(TrainConfig), *model_keys(GatewayConfig)]
    missing = [key for key in keys if f"<code>{key}</code>" not in page]
    assert len(keys) > 150
    assert not missing, f"keys missing from the configuration reference: {missing}"


def test_reference_shows_defaults_and_docstrings(site: tuple[Path, str]) -> None:
    """A key's row carries its default and the sentence its model documents it with."""
    out, _ = site
    page = (out / "reference" / "configuration" / "index.html").read_text()
    row = _row(page, "services.learner.collective_timeout_s")
    assert "<code>120.0</code>" in row and "how long a learner of a group waits" in row
    row = _row(page, "gateway.max_head_bytes")
    assert "<code>16384</code>" in row and "Longest request line plus headers" in row
    row = _row(page, "algorithm.lr")  # mirrored from PPOConfig: its default and docstring
    assert "<code>0.00025</code>" in row and "Adam learning rate" in row


def test_readme_is_short() -> None:
    """The README is a front page, not the manual."""
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


def test_readme_links_resolve() -> None:
    """Every relative link of the README names a file that exists, every anchor a heading."""
    text = README.read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+\s+(.*)$", text, flags=re.M)}
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        if path and not (ROOT / path).exists():
            broken.append(target)
        elif not path and anchor not in anchors:
            broken.append(target)
    assert LINK.findall(text), "the README links nowhere"
    assert not broken, f"README links to nothing: {broken}"


def model_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key of a model, its nested sections' keys included."""
    keys = []
    for name, field in model.model_fields.items():
        keys.append(prefix + name)
        for sub in _models_in(field.annotation):
            keys.extend(model_keys(sub, f"{prefix}{name}."))
    return keys


def _models_in(annotation: typing.Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (``X | None``, ``list[X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _row(page: str, key: str) -> str:
    """The HTML table row of ``key`` in the reference."""
    match = re.search(rf"<tr>\s*<td><code>{re.escape(key)}</code>.*?</tr>", page, flags=re.S)
    assert match, f"no row for {key}"
    return match.group(0)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")
