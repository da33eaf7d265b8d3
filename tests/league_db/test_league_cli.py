"""``msagent league RUN_DIR``: the history's size, ``--sql`` answers (read-only, errors by
name), and every SQL question of the docs page runs on a league's database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from msagent.cli import app
from msagent.league_db import database_url
from msagent.league_db.reader import query
from msagent.league_history import run_database
from msagent.rundir import RunDir
from msagent.vocabulary import ModelKey
from tests.league_db.test_league_database import result, service

DOCS = Path(__file__).resolve().parents[2] / "docs" / "guides" / "league-database.md"
runner = CliRunner()


@pytest.fixture
def run(tmp_path: Path) -> RunDir:
    """A run directory whose league (two players, two snapshots) reported 6 results."""
    run = RunDir.create(tmp_path, "db")
    league = service(database_url("", run.path), run.run_id)
    league.add_snapshot("main", ModelKey("main", 1), 5)
    league.add_snapshot("me", ModelKey("me", 1), 5)
    league.report([result(league, "main", o) for o in (1.0, -1.0, -1.0, 0.0)])
    league.report([result(league, "me", 1.0) for _ in range(2)])
    return run


def test_sql_answers_a_question_and_refuses_writes_and_bad_queries(run: RunDir) -> None:
    done = runner.invoke(app, ["league", str(run.path), "--sql",
                               "select learner, count(*) as n from matches group by learner"],
                         env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert re.search(r"main\s*│\s*4", done.output) and re.search(r"me\s*│\s*2", done.output)
    wrote = runner.invoke(app, ["league", str(run.path), "--sql", "delete from matches"])
    assert wrote.exit_code == 2 and "readonly" in wrote.output
    bad = runner.invoke(app, ["league", str(run.path), "--sql", "select nope from matches"])
    assert bad.exit_code == 2 and "no such column: nope" in bad.output
    engine, run_id = run_database(run.path)
    assert query(engine, "select count(*) from matches")[1] == [(6,)]  # nothing deleted


def test_a_run_without_a_database_is_named(tmp_path: Path) -> None:
    bare = RunDir.create(tmp_path, "old")
    done = runner.invoke(app, ["league", str(bare.path), "--sql", "select 1"])
    assert done.exit_code == 2 and "has no league database" in done.output


def test_every_question_of_the_docs_page_runs(run: RunDir) -> None:
    questions = re.findall(r"```sql\n(.*?)```", DOCS.read_text(), re.S)
    assert len(questions) >= 6
    engine, _ = run_database(run.path)
    answers = {q: query(engine, q)[1] for q in questions}  # each one runs

    def answer(phrase: str) -> list[tuple]:
        return next(a for q, a in answers.items() if phrase in q)

    assert sum(dict(answer("outcome < 0")).values()) == 2  # main lost two of its four games
    assert sum(r[-1] for r in answer("learner_seat,")) == 4  # main's games, by day and seat
    assert all(r[0] for r in answer("from snapshots order by created_at"))
    assert answer("results_after_the_cut") == []  # one generation: no cut was resumed


def test_the_sql_help_names_every_table_of_the_schema() -> None:
    from msagent.league_db import schema

    shown = runner.invoke(app, ["league", "--help"], env={"COLUMNS": "300"}).output
    assert all(name in shown for name in schema.metadata.tables), shown
