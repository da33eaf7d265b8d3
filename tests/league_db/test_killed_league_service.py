"""A league service killed (SIGKILL) while workers report: every result whose report call
returned is in the database, on Ray."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from msagent.errors import InstanceDiedError, ServiceDiedError
from msagent.league import LeagueSettings, PlayerSpec
from msagent.league_db import DATABASE_NAME, database_url
from msagent.league_db.recorder import DatabaseSettings
from msagent.runtime import launch
from msagent.services.league import LeagueClient, LeagueService
from msagent.vocabulary import EpisodeResult, ModelKey
from tests.services.helpers import wait_until

BATCH = 8
"""Results per report call (a worker's batch)."""


@pytest.mark.slow
def test_no_acknowledged_result_is_lost_when_the_league_service_is_killed(
        ray_only: str, tmp_path: Path) -> None:
    handle = launch(LeagueService, args=(
        LeagueSettings(players=(PlayerSpec("main", "main"),)), 0, 2, None, "", "run-k", None,
        DatabaseSettings(database_url("", tmp_path), "run-k", "run")))
    acknowledged: list[int] = []
    stopped = threading.Event()

    def report_until_killed() -> None:
        try:
            while not stopped.is_set():
                matches = LeagueClient.next_matches("main", BATCH)
                acknowledged.append(LeagueClient.report([
                    EpisodeResult(1.0, 5, ModelKey("main", 1), outcome=1.0, match=m)
                    for m in matches]))
        except (InstanceDiedError, ServiceDiedError):
            pass  # the service died mid-call: that batch was not acknowledged

    reporter = threading.Thread(target=report_until_killed, daemon=True)
    reporter.start()
    wait_until(lambda: len(acknowledged) >= 20, timeout_s=60, what="20 acknowledged reports")
    os.kill(handle.placements()[0]["pid"], signal.SIGKILL)
    reporter.join(timeout=60)
    stopped.set()
    assert not reporter.is_alive()
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        seqs = [s for (s,) in db.execute("select seq from matches order by seq")]
    # every acknowledged result is there; at most the batch in flight when it died beyond
    assert seqs == list(range(1, len(seqs) + 1))
    print("acknowledged", acknowledged[-1], "in the database", len(seqs))
    assert acknowledged[-1] <= len(seqs) <= acknowledged[-1] + BATCH, (acknowledged[-1], len(seqs))
