"""The league database's tables (SQLAlchemy Core): what a league run keeps of its history.

One database may hold several runs (a PostgreSQL server for a cluster), so every row names
its ``run_id``. The migrations in ``migrations/versions`` build exactly these tables (a test
compares them); a change here needs a new migration there.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON, BigInteger, Boolean, Column, Float, ForeignKeyConstraint, Index, Integer, MetaData,
    String, Table, Text,
)

metadata = MetaData()

RUN_ID = 200
"""Longest run id (a run directory's name and 8 hex digits)."""
PARTICIPANT = 300
"""Longest participant id (``player``, ``player:version`` or ``bot:name``)."""

runs = Table(
    "runs", metadata,
    Column("run_id", String(RUN_ID), primary_key=True),
    Column("name", String(RUN_ID), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("config", Text, nullable=False, default=""),
    Column("generation", Integer, nullable=False, default=0),
)
"""One row per run: its name, the config it was started with and its newest generation."""

generations = Table(
    "generations", metadata,
    Column("run_id", String(RUN_ID), primary_key=True),
    Column("generation", Integer, primary_key=True),
    Column("started_at", Float, nullable=False),
    Column("resumed_step", BigInteger),
    Column("reported", BigInteger, nullable=False, default=0),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""Each start of a run: 0 for the first, one more per ``--resume`` (from which checkpoint
step, and how many results the league had then)."""

players = Table(
    "players", metadata,
    Column("run_id", String(RUN_ID), primary_key=True),
    Column("player_id", String(PARTICIPANT), primary_key=True),
    Column("role", String(64), nullable=False),
    Column("parent", String(PARTICIPANT)),
    Column("resets", Integer, nullable=False, default=0),
    Column("updated_at", Float, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""The trainable players: role, the snapshot each continues from, how often it was reset."""

snapshots = Table(
    "snapshots", metadata,
    Column("run_id", String(RUN_ID), primary_key=True),
    Column("participant", String(PARTICIPANT), primary_key=True),
    Column("player_id", String(PARTICIPANT), nullable=False),
    Column("version", BigInteger, nullable=False),
    Column("role", String(64), nullable=False),
    Column("parent", String(PARTICIPANT)),
    Column("created_at", Float, nullable=False),
    Column("updates", BigInteger),
    Column("generation", Integer, nullable=False, default=0),
    Column("weights_deleted", Boolean, nullable=False, default=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""Every frozen snapshot: whose, which version, its lineage (``parent``), when, after how many
updates; its weights are the run's snapshot file of (player_id, version) until retention
deletes them (``weights_deleted``)."""

matches = Table(
    "matches", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    Column("run_id", String(RUN_ID), nullable=False),
    Column("generation", Integer, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("time", Float, nullable=False),
    Column("learner", String(PARTICIPANT), nullable=False),
    Column("opponent", String(PARTICIPANT)),
    Column("learner_seat", Integer, nullable=False),
    Column("seats", JSON, nullable=False),
    Column("outcome", Float, nullable=False),
    Column("returns", JSON, nullable=False),
    Column("length", Integer, nullable=False),
    Column("version", BigInteger, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
    Index("matches_by_learner", "run_id", "learner", "time"),
    Index("matches_by_run", "run_id", "id"),
)
"""Every result the league accepted, no cap (``matches_by_run``: a run's newest results and
its count without a sort or a scan of other runs' rows): ``seq`` is the league's count of
results with this one (a resumed generation counts on from its checkpoint's); ``learner``
the trainable player's seat (``learner_seat``) at ``version``; ``opponent`` the first other
seat (the only one in a two-seat game; ``seats`` has them all); ``outcome`` +1/0/-1 for the
learner; ``returns`` every seat's return."""

ratings = Table(
    "ratings", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    Column("run_id", String(RUN_ID), nullable=False),
    Column("time", Float, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("participant", String(PARTICIPANT), nullable=False),
    Column("elo", Float, nullable=False),
    Column("openskill_mu", Float, nullable=False),
    Column("openskill_sigma", Float, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
    Index("ratings_by_participant", "run_id", "participant", "seq"),
)
"""Rating history: after each batch of results, the Elo and OpenSkill (mu, sigma) of every
participant the batch touched, at the league's result count ``seq``."""

checkpoints = Table(
    "checkpoints", metadata,
    Column("run_id", String(RUN_ID), primary_key=True),
    Column("generation", Integer, primary_key=True),
    Column("step", BigInteger, primary_key=True),
    Column("time", Float, nullable=False),
    Column("reported", BigInteger, nullable=False),
    Column("versions", JSON, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""Each checkpoint the run wrote: its step, the league's result count in it (the cut: results
with a larger ``seq`` in the same generation are not in its league state) and each player's
saved version. A resume from it starts the next generation."""

evaluations = Table(
    "evaluations", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    Column("run_id", String(RUN_ID), nullable=False),
    Column("generation", Integer, nullable=False),
    Column("time", Float, nullable=False),
    Column("player", String(PARTICIPANT), nullable=False),
    Column("version", BigInteger, nullable=False),
    Column("opponent", String(PARTICIPANT)),
    Column("seat", Integer, nullable=False),
    Column("outcome", Float),
    Column("episode_return", Float, nullable=False),
    Column("length", Integer, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
    Index("evaluations_by_player", "run_id", "player", "time"),
)
"""Every evaluation game (the evaluator's, not the league's): who, at which version, against
whom, from which seat, and how it ended."""

nash_convs = Table(
    "nash_convs", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    Column("run_id", String(RUN_ID), nullable=False),
    Column("time", Float, nullable=False),
    Column("player", String(PARTICIPANT), nullable=False),
    Column("version", BigInteger),
    Column("value", Float, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""Exact NashConv measures (small OpenSpiel games) of a player, or of ``league`` (the
league's mixture)."""

psro_iterations = Table(
    "psro_iterations", metadata,
    Column("run_id", String(RUN_ID), primary_key=True),
    Column("iteration", Integer, primary_key=True),
    Column("sizes", JSON, nullable=False),
    Column("meta", JSON, nullable=False),
    Column("nash_conv", Float),
    Column("wall_s", Float, nullable=False),
    Column("episodes", BigInteger, nullable=False),
    Column("eval_games", BigInteger, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""PSRO's iterations: population sizes, the meta-strategy solved, its NashConv when measured."""

exploits = Table(
    "exploits", metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    Column("run_id", String(RUN_ID), nullable=False),
    Column("time", Float, nullable=False),
    Column("player", String(PARTICIPANT), nullable=False),
    Column("checkpoint_step", BigInteger),
    Column("budget", String(64), nullable=False),
    Column("env_steps", BigInteger),
    Column("games", Integer, nullable=False),
    Column("win_rate", Float, nullable=False),
    Column("mean_return", Float, nullable=False),
    Column("record", JSON, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"]),
)
"""``msagent exploit`` results against this run: the target, the budget, the trained best
response's win rate and mean return (``record``: everything it printed, intervals included)."""
