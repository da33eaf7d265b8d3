"""The first schema: runs, generations, players, snapshots, matches and rating history.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

RUN_ID, PARTICIPANT = 200, 300
ROW_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def _run() -> sa.ForeignKeyConstraint:
    """A row's reference to its run."""
    return sa.ForeignKeyConstraint(["run_id"], ["runs.run_id"])


def upgrade() -> None:
    """Create the first tables."""
    op.create_table(
        "runs", sa.Column("run_id", sa.String(RUN_ID), primary_key=True),
        sa.Column("name", sa.String(RUN_ID), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("generation", sa.Integer, nullable=False))
    op.create_table(
        "generations", sa.Column("run_id", sa.String(RUN_ID), primary_key=True),
        sa.Column("generation", sa.Integer, primary_key=True),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("resumed_step", sa.BigInteger),
        sa.Column("reported", sa.BigInteger, nullable=False), _run())
    op.create_table(
        "players", sa.Column("run_id", sa.String(RUN_ID), primary_key=True),
        sa.Column("player_id", sa.String(PARTICIPANT), primary_key=True),
        sa.Column("role", sa.String(64), nullable=False),
        sa.Column("parent", sa.String(PARTICIPANT)),
        sa.Column("resets", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False), _run())
    op.create_table(
        "snapshots", sa.Column("run_id", sa.String(RUN_ID), primary_key=True),
        sa.Column("participant", sa.String(PARTICIPANT), primary_key=True),
        sa.Column("player_id", sa.String(PARTICIPANT), nullable=False),
        sa.Column("version", sa.BigInteger, nullable=False),
        sa.Column("role", sa.String(64), nullable=False),
        sa.Column("parent", sa.String(PARTICIPANT)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updates", sa.BigInteger),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("weights_deleted", sa.Boolean, nullable=False), _run())
    _matches(_run())
    _ratings(_run())


def _matches(run: sa.ForeignKeyConstraint) -> None:
    """Every accepted result."""
    op.create_table(
        "matches", sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(RUN_ID), nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("time", sa.Float, nullable=False),
        sa.Column("learner", sa.String(PARTICIPANT), nullable=False),
        sa.Column("opponent", sa.String(PARTICIPANT)),
        sa.Column("learner_seat", sa.Integer, nullable=False),
        sa.Column("seats", sa.JSON, nullable=False),
        sa.Column("outcome", sa.Float, nullable=False),
        sa.Column("returns", sa.JSON, nullable=False),
        sa.Column("length", sa.Integer, nullable=False),
        sa.Column("version", sa.BigInteger, nullable=False), run)
    op.create_index("matches_by_learner", "matches", ["run_id", "learner", "time"])


def _ratings(run: sa.ForeignKeyConstraint) -> None:
    """Rating history."""
    op.create_table(
        "ratings", sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(RUN_ID), nullable=False),
        sa.Column("time", sa.Float, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("participant", sa.String(PARTICIPANT), nullable=False),
        sa.Column("elo", sa.Float, nullable=False),
        sa.Column("openskill_mu", sa.Float, nullable=False),
        sa.Column("openskill_sigma", sa.Float, nullable=False), run)
    op.create_index("ratings_by_participant", "ratings", ["run_id", "participant", "seq"])


def downgrade() -> None:
    """Drop them (newest first)."""
    for table in ("ratings", "matches", "snapshots", "players", "generations", "runs"):
        op.drop_table(table)
