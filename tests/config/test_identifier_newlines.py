"""Identifiers checked with a regex refuse a trailing newline: ``re.match`` with a pattern
ending in ``$`` let ``"a\\n"`` through (``$`` also matches before a final newline), so such a
name could become a run directory, a store partition or a league id; a TOML key holding one
was written bare, breaking the file."""

from __future__ import annotations

import tomllib

import pytest
from pydantic import ValidationError

from msagent.config.data import DataSection, PublishSection
from msagent.config.general import RunSection
from msagent.config.league import LeaguePlayerSection
from msagent.config.toml_writer import dumps


@pytest.mark.parametrize("make", [
    lambda: RunSection(name="run\n"),
    lambda: DataSection(source="store", store="exp", game="cartpole\n"),
    lambda: PublishSection(models="models", game="cartpole\n"),
    lambda: LeaguePlayerSection(id="main\n"),
], ids=["run name", "data.game", "publish.game", "league player id"])
def test_a_name_with_a_trailing_newline_is_refused(make):
    with pytest.raises(ValidationError):
        make()


def test_a_toml_key_with_a_trailing_newline_is_quoted():
    data = {"a\n": 1, "plain": 2}
    assert tomllib.loads(dumps(data)) == data
