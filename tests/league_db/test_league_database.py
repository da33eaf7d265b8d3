"""The league database: the league service writes every accepted result, the ratings it
moved and every snapshot before it answers; an older run's state is imported once; the
schema the migrations build is the one the code reads; the same on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from msagent.league import LeagueSettings, PlayerSpec
from msagent.league_db import LeagueDatabase, database_url, redact, schema
from msagent.league_db.engine import head_revision, make_engine, migrate, revision
from msagent.league_db.recorder import DatabaseSettings
from msagent.services.league import LeagueService
from msagent.vocabulary import EpisodeResult, Match, ModelKey, PolicyRef
from tests.postgres_server import postgres_url  # noqa: F401  (a fixture)

PLAYERS = (PlayerSpec("main", "main"), PlayerSpec("me", "main_exploiter"))


def service(url: str, run_id: str = "run-a", state: dict | None = None,
            generation: int = 0) -> LeagueService:
    """A league service (in this process) writing to ``url``."""
    return LeagueService(LeagueSettings(players=PLAYERS), seed=0, state=state,
                         database=DatabaseSettings(url, run_id, "run", "[run]\n", generation))


def result(league: LeagueService, player: str = "main", outcome: float = 1.0) -> EpisodeResult:
    """A finished game of a match the league made for ``player``."""
    match = league.next_matches(player)[0]
    return EpisodeResult(0.5, 7, ModelKey(player, 3), outcome=outcome, match=match,
                         seat_returns=(outcome, -outcome))


def test_every_accepted_result_is_a_row_before_the_report_returns(tmp_path: Path) -> None:
    url = database_url("", tmp_path)
    league = service(url)
    league.add_snapshot("main", ModelKey("main", 1), 4)
    bogus = EpisodeResult(0.0, 3, ModelKey("main", 3), outcome=1.0,
                          match=Match((PolicyRef.player("nobody"), PolicyRef.player("main"))))
    assert league.report([result(league), bogus, result(league, "me", -1.0)]) == 2
    # another connection (the sqlite3 command line's library) sees both, not the refused one
    with sqlite3.connect(tmp_path / "league.db") as conn:
        rows = conn.execute("select seq, learner, outcome, returns, length, version "
                            "from matches order by seq").fetchall()
    assert rows == [(1, "main", 1.0, "[1.0, -1.0]", 7, 3), (2, "me", -1.0, "[-1.0, 1.0]", 7, 3)]
    db = LeagueDatabase(url, "run-a", migrate_schema=False)
    ratings = db.rows(schema.ratings, "id")
    newest = {r["participant"]: r["elo"] for r in ratings}
    summary = league.summary()["players"]
    assert newest["main"] == pytest.approx(summary["main"]["elo"])
    assert newest["me"] == pytest.approx(summary["me"]["elo"])
    assert {r["seq"] for r in ratings} == {2}  # one batch: rated once, at its last result
    league.report([result(league, "main", -1.0)])  # within a second: its ratings wait ...
    assert {r["seq"] for r in db.rows(schema.ratings)} == {2}
    league.state_dict()  # ... for the next checkpoint (or the next due report)
    newest = {r["participant"]: (r["seq"], r["elo"]) for r in db.rows(schema.ratings, "id")}
    assert newest["main"] == (3, pytest.approx(league.summary()["players"]["main"]["elo"]))


def test_snapshots_keep_their_lineage_and_the_player_its_resets(tmp_path: Path) -> None:
    url = database_url("", tmp_path)
    league = service(url)
    league.add_snapshot("main", ModelKey("main", 1), 10)
    league.add_snapshot("main", ModelKey("main", 1), 10)  # a repeat adds nothing
    league.add_snapshot("main", ModelKey("main", 2), 20)
    db = LeagueDatabase(url, "run-a", migrate_schema=False)
    snaps = db.rows(schema.snapshots, "version")
    assert [(s["participant"], s["parent"], s["updates"]) for s in snaps] == [
        ("main:1", None, 10), ("main:2", "main:1", 20)]
    players = {p["player_id"]: p for p in db.rows(schema.players)}
    assert players["main"]["parent"] == "main:2" and players["me"]["role"] == "main_exploiter"


def test_a_resume_counts_on_and_an_older_run_is_imported_once(tmp_path: Path) -> None:
    old_service = LeagueService(LeagueSettings(players=PLAYERS), seed=0)  # no database
    old_service.add_snapshot("main", ModelKey("main", 1), 3)
    old_service.report([result(old_service) for _ in range(5)])
    state = old_service.state_dict()
    url = database_url("", tmp_path)
    resumed = service(url, state=state, generation=1)
    db = LeagueDatabase(url, "run-a", migrate_schema=False)
    assert [m["seq"] for m in db.rows(schema.matches, "seq")] == [1, 2, 3, 4, 5]
    assert [s["participant"] for s in db.rows(schema.snapshots)] == ["main:1"]
    resumed.report([result(resumed)])
    again = service(url, state=resumed.state_dict(), generation=2)  # not imported twice
    again.report([result(again)])
    matches = db.rows(schema.matches, "id")
    assert [(m["seq"], m["generation"]) for m in matches][-2:] == [(6, 1), (7, 2)]
    assert len(matches) == 7
    assert [g["generation"] for g in db.rows(schema.generations, "generation")] == [1, 2]


def test_the_migrations_build_the_schema_the_code_reads(tmp_path: Path) -> None:
    engine = make_engine(database_url("", tmp_path))
    assert revision(engine) is None
    LeagueDatabase(database_url("", tmp_path), "r")
    assert revision(engine) == head_revision()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), schema.metadata)
    assert diff == []


def test_an_older_schema_is_migrated_forward_keeping_its_rows(tmp_path: Path) -> None:
    url = database_url("", tmp_path)
    migrate(make_engine(url), "0001")  # a database written by the first schema
    with sqlite3.connect(tmp_path / "league.db") as conn:
        conn.execute("insert into runs values ('old', 'old', 1.0, '', 0)")
        conn.execute("insert into matches (run_id, generation, seq, time, learner, "
                     "learner_seat, seats, outcome, returns, length, version) values "
                     "('old', 0, 1, 1.0, 'main', 0, '[\"main\", \"main:1\"]', 1.0, '[]', 3, 1)")
    assert revision(make_engine(url)) == "0001"
    db = LeagueDatabase(url, "old")  # as a resume opens it
    assert revision(db.engine) == head_revision() != "0001"
    assert db.rows(schema.matches)[0]["seats"] == ["main", "main:1"]
    db.upsert(schema.checkpoints, [{"generation": 0, "step": 5, "time": 2.0, "reported": 1,
                                     "versions": {"main": 3}}], ("generation", "step"))
    assert db.rows(schema.checkpoints)[0]["versions"] == {"main": 3}


def test_bad_urls_are_refused_by_name_and_passwords_never_shown() -> None:
    with pytest.raises(ValueError, match="use sqlite:///PATH or postgresql://"):
        make_engine("mysql://root:hunter2@db/x")
    assert redact("postgresql://u:hunter2@h:5432/d") == "postgresql://u:***@h:5432/d"
    assert redact("sqlite:////tmp/league.db") == "sqlite:////tmp/league.db"


@pytest.mark.slow
def test_postgresql_holds_two_runs_apart_with_the_same_schema(postgres_url: str) -> None:  # noqa: F811
    a, b = service(postgres_url, "pg-run-a"), service(postgres_url, "pg-run-b")
    a.add_snapshot("main", ModelKey("main", 1), 2)
    a.report([result(a) for _ in range(3)])
    b.report([result(b, "me", 0.0)])
    db_a = LeagueDatabase(postgres_url, "pg-run-a", migrate_schema=False)
    db_b = LeagueDatabase(postgres_url, "pg-run-b", migrate_schema=False)
    assert (db_a.count(schema.matches), db_b.count(schema.matches)) == (3, 1)
    assert db_a.rows(schema.matches, "seq")[0]["seats"][0] == "main"  # JSON, not text
    assert [s["participant"] for s in db_a.rows(schema.snapshots)] == ["main:1"]
    assert db_b.count(schema.snapshots) == 0
    with db_a.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), schema.metadata)
        wins = conn.execute(text("select count(*) from matches where run_id = 'pg-run-a' "
                                 "and outcome > 0")).scalar_one()
    assert diff == [] and wins == 3
