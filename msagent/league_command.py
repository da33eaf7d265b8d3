"""``msagent league RUN_DIR``: the newest league checkpoint's ladder, lineage and payoff
heatmap, the size of the run's history, and ``--sql`` questions on its league database."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from msagent.errors import UserError
from msagent.exits import USER_ERROR_EXIT, fail


def league_command(
    run_dir: Path = typer.Argument(..., help="A league run directory that `msagent train` wrote."),
    heatmap: Path | None = typer.Option(
        None, help="Where to write the payoff heatmap PNG (default RUN_DIR/payoff_heatmap.png)."),
    sql: str | None = typer.Option(
        None, help="Print the answer of one read-only SQL query on the run's league database "
                   "instead (tables runs, generations, players, snapshots, matches, ratings, "
                   "checkpoints, evaluations, nash_convs, psro_iterations, exploits)."),
) -> None:
    """Print the Elo ladder and the lineage of a run's newest league checkpoint; write the
    payoff heatmap. With --sql, answer a read-only query on the run's league database."""
    if sql is not None:
        _league_sql(run_dir, sql)
        return
    from msagent.evaluate import league_state
    from msagent.league.report import ladder_text, lineage_text, save_heatmap

    try:
        step, state = league_state(run_dir)
    except UserError as exc:
        fail(str(exc), USER_ERROR_EXIT)
    out = Console(soft_wrap=True)
    out.print(Text(f"league of {run_dir} at checkpoint step {step}", style="bold"))
    out.print(Text(ladder_text(state)))
    out.print(Text("lineage:", style="bold"))
    out.print(Text(lineage_text(state)))
    path = save_heatmap(state, heatmap if heatmap is not None else run_dir / "payoff_heatmap.png")
    out.print(Text(f"payoff heatmap: {path}", style="bold"))
    out.print(Text(_history_line(run_dir), style="bold"))


def _history_line(run_dir: Path) -> str:
    """One line on the run's league database: how many results, snapshots, generations."""
    from sqlalchemy.exc import SQLAlchemyError

    from msagent.league_db.reader import history
    from msagent.league_history import run_database

    try:
        engine, run_id = run_database(run_dir)
        found = history(engine, run_id)
    except (UserError, SQLAlchemyError) as exc:
        return f"league database: none ({exc})"
    return (f"league database: {found['matches']} results, {found['snapshots']} snapshots, "
            f"{found['generations']} generation(s); ask it with --sql")


def _league_sql(run_dir: Path, sql: str) -> None:
    """Print one read-only query's answer as a table (a clear error for a bad query)."""
    from rich.table import Table
    from sqlalchemy.exc import SQLAlchemyError

    from msagent.league_db.reader import MAX_ROWS, query
    from msagent.league_history import run_database

    try:
        engine, _ = run_database(run_dir)
        columns, rows = query(engine, sql)
    except UserError as exc:
        fail(str(exc), USER_ERROR_EXIT)
    except SQLAlchemyError as exc:
        fail(f"the query failed: {exc.orig if getattr(exc, 'orig', None) else exc}",
              USER_ERROR_EXIT)
    table = Table(*columns) if columns else Table("(no rows)")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    Console(soft_wrap=True).print(table)
    if len(rows) == MAX_ROWS:
        Console(stderr=True).print(f"(the first {MAX_ROWS} rows)")
