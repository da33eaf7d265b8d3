"""A folder with env/agent scripts and a helper that writes TOML configs next to them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    """Write ``text`` as ``config.toml`` in a folder that also holds env.py and agent.py."""
    (tmp_path / "env.py").write_text("def make_env(**kw):\n    raise NotImplementedError\n")
    (tmp_path / "agent.py").write_text("def make_policy(obs, act):\n    raise TypeError\n")

    def write(text: str, name: str = "config.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write
