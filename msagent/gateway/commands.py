"""The gateway's commands of the ``msagent`` CLI: ``serve`` and ``tokens create|list|revoke``.

Kept light to import (no FastAPI or uvicorn until ``serve`` runs). Errors the user can fix
(a bad config, a bad scope, an unknown token) print one red line and exit with 2.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Column, Table

from msagent.errors import UserError
from msagent.exits import fail as _fail

if TYPE_CHECKING:
    from msagent.config.gateway import GatewayConfig
    from msagent.gateway.tokens import TokenStore


tokens_app = typer.Typer(name="tokens", no_args_is_help=True, rich_markup_mode="markdown",
                         help="Per-client API tokens of the gateway (stored hashed).")


def serve_command(
    config: Path = typer.Argument(..., help="The gateway config (TOML)."),
    port: int | None = typer.Option(None,
                                    help="Overrides the port in the config (0: any free port)."),
) -> None:
    """Run the game-client gateway: HTTP uploads to a Redis stream, model downloads."""
    import logging

    from msagent.gateway.serve import Terminated, serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    out = Console(soft_wrap=True, highlight=False)
    try:
        serve(config, port, say=out.print)
    except UserError as exc:
        _fail(str(exc))
    except OSError as exc:  # e.g. the port is taken
        _fail(f"cannot serve: {exc}")
    except (KeyboardInterrupt, Terminated):
        pass
    out.print("gateway stopped")


@tokens_app.command("create")
def tokens_create(
    config: Path = typer.Argument(..., help="The gateway config (TOML)."),
    client: str = typer.Option(..., help="The client's name (recorded with its uploads)."),
    scope: list[str] = typer.Option(..., help="upload, download or admin (repeatable)."),
    game: list[str] | None = typer.Option(
        None, help="A game of the config the token is valid for (repeatable)."),
    all_games: bool = typer.Option(
        False, "--all-games", help="Valid for every game, also games added later."),
    expires_days: float | None = typer.Option(None, help="Expire after this many days."),
) -> None:
    """Create a token for a client and its games and print it (once: only its hash is
    stored)."""
    cfg = _config(config)
    _check_declared(game or [], [g.name for g in cfg.gateway.games])
    try:
        token_id, token = _store(config).create(client, scope, expires_days, game or (),
                                                all_games)
    except UserError as exc:
        _fail(str(exc))
    games = "all games" if all_games else ", ".join(dict.fromkeys(game or ()))
    Console(stderr=True, soft_wrap=True).print(
        f"token {token_id} for {client} ({', '.join(scope)}; {games}); store it now, it is "
        "not shown again:", highlight=False)
    print(token)


@tokens_app.command("list")
def tokens_list(config: Path = typer.Argument(..., help="The gateway config (TOML).")) -> None:
    """List the tokens: id, client, scopes, games (``*``: all), dates, state (never the
    tokens or hashes)."""
    try:
        entries = _store(config).list()
    except UserError as exc:
        _fail(str(exc))
    table = Table(Column("id", no_wrap=True), "client",  # ids whole: revoke takes them
                  Column("scopes", overflow="fold"), Column("games", overflow="fold"),
                  "created", "expires", "state")
    now = datetime.datetime.now().timestamp()
    for e in entries:
        state = "revoked" if e.revoked else "active" if e.usable(now) else "expired"
        table.add_row(e.token_id, e.client, ", ".join(e.scopes),
                      "*" if e.all_games else ", ".join(e.games), _date(e.created_at),
                      _date(e.expires_at), state)
    out = Console(soft_wrap=True)
    out.print(table)
    old = [e.token_id for e in entries if e.issued_before_games and e.usable(now)]
    if old:
        out.print(f"{', '.join(old)}: issued before tokens had games, valid for every game; "
                  "re-issue with --game", highlight=False)


@tokens_app.command("revoke")
def tokens_revoke(
    config: Path = typer.Argument(..., help="The gateway config (TOML)."),
    client_or_id: str = typer.Argument(..., help="A token id, or a client (all its tokens)."),
) -> None:
    """Revoke tokens; a running gateway refuses them within a second."""
    try:
        revoked = _store(config).revoke(client_or_id)
    except UserError as exc:
        _fail(str(exc))
    ids = ", ".join(f"{e.token_id} ({e.client})" for e in revoked)
    Console(soft_wrap=True).print(f"revoked {ids}", highlight=False)


def _config(config: Path) -> GatewayConfig:
    """The gateway config (a bad one: one red line, exit 2)."""
    from msagent.config.gateway import load_gateway_config

    try:
        return load_gateway_config(config)
    except UserError as exc:
        _fail(str(exc))


def _store(config: Path) -> TokenStore:
    """The token store of a config's data folder."""
    from msagent.gateway.tokens import TokenStore

    return TokenStore.of_data_dir(_config(config).data_dir)


def _check_declared(games: list[str], declared: list[str]) -> None:
    """Refuse games the config does not declare (a token for a game added later: add the game
    to the config first, so a typo cannot make a token for no game)."""
    unknown = [g for g in games if g not in declared]
    if unknown:
        _fail(f"the config declares no game {', '.join(map(repr, unknown))}; its games: "
              f"{', '.join(declared)}")


def _date(stamp: float | None) -> str:
    """A Unix time as local ``YYYY-MM-DD HH:MM`` (``-`` for none)."""
    if stamp is None:
        return "-"
    return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


