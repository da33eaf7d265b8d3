"""Every example TOML in ``examples/`` validates (a renamed or misspelt key fails here, not in
a user's first run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.config import load_config

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_config_loads(path: Path) -> None:
    cfg = load_config(path)
    assert cfg.run.name and Path(cfg.scripts.env).is_file()
