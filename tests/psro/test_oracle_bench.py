"""``benchmarks/psro_oracle.py``: the fixed mixture its best response trains against is played
by a bot that acts exactly as the mixture's tables say, at every information state."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from msagent.psro import exact
from msagent.psro.game_tree import build_tree
from msagent.psro.neural import InfostateInputs
from msagent.user_scripts import load_script

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "psro_oracle.py"


def _bench():
    """Import the benchmark script (not a package) by path."""
    spec = importlib.util.spec_from_file_location("psro_oracle", _BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_mixture_bot_plays_each_seats_table_at_every_information_state(
        tmp_path: Path) -> None:
    tree = build_tree("leduc_poker")
    uniform = [exact.uniform_policy(tree, s) for s in range(2)]
    profile = [exact.best_response(tree, uniform, s)[0] for s in range(2)]  # one-hot rows
    inputs = InfostateInputs(pyspiel.load_game("leduc_poker"), tree)
    bot = load_script(str(_bench().write_bot(tmp_path, inputs, profile)))
    for seat in range(2):
        played = [bot.act(obs, legal) for obs, legal in zip(inputs.obs[seat], tree.legal[seat])]
        assert played == np.argmax(profile[seat], axis=1).tolist()
        assert len(played) > 400  # every information state of the seat, not a few
        privileged = [bot.act(np.concatenate([obs, np.ones_like(obs)]), legal)
                      for obs, legal in zip(inputs.obs[seat], tree.legal[seat])]
        assert privileged == played  # the critic's half after the seat's own is not read


def test_the_exact_mixture_gets_less_exploitable_with_iterations() -> None:
    bench = _bench()
    _, _, first = bench.exact_mixture("kuhn_poker", 0)
    _, profile, later = bench.exact_mixture("kuhn_poker", 6)
    assert later < first / 2 and len(profile) == 2


def test_a_mixture_file_reads_back_as_the_tables_written(tmp_path: Path) -> None:
    from msagent.psro.tabular_io import write_policy

    bench = _bench()
    tree, profile, conv = bench.exact_mixture("kuhn_poker", 3)
    path = write_policy(tmp_path / "mix.json", "kuhn_poker()", tree, profile)
    _, read, read_conv = bench.file_mixture("kuhn_poker", path)
    for table, back in zip(profile, read):
        np.testing.assert_allclose(back, table / table.sum(axis=1, keepdims=True), atol=1e-12)
    assert read_conv == pytest.approx(conv, abs=1e-9) and conv > 0.01
