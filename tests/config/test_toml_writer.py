"""The fallback TOML writer reloads to the same data (and dump_config works without tomli_w)."""

from __future__ import annotations

import math
import sys
import tomllib

import pytest

from msagent.config import dump_config, load_config
from msagent.config.toml_writer import dumps
from tests.config.helpers import MINIMAL

DATA = {
    "top": 1,
    "run": {"name": "x", "stop": {"env_steps": 5, "mean_return": -1.5e-7}, "flag": False},
    "env": {"id": 'Cart"Pole\\v1\n\t\x01\x7f é 😀', "sizes": [1, 2], "grid": [[1], [2, 3]],
            "layers": [{"w": 3}, {"w": 4.0}], "weird key": {"a.b": 1.0}},
    "empty": {},
}


def test_fallback_writer_round_trips() -> None:
    assert tomllib.loads(dumps(DATA)) == DATA


def test_fallback_writer_spells_special_floats() -> None:
    loaded = tomllib.loads(dumps({"a": math.inf, "b": -math.inf, "c": 2.0}))
    assert loaded["a"] == math.inf and loaded["b"] == -math.inf and loaded["c"] == 2.0
    assert math.isnan(tomllib.loads(dumps({"n": math.nan}))["n"])


def test_dump_config_without_tomli_w(write_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tomli_w", None)
    cfg = load_config(write_config(MINIMAL + '[env]\nid = "CartPole-v1"\n[algorithm]\nlr = 0.1\n'))
    assert load_config(write_config(dump_config(cfg), name="again.toml")) == cfg
