"""Evaluate a finished (or running) run's checkpoint offline: no Ray, no services.

:func:`evaluate_run` loads a run directory's config and newest readable checkpoint, builds a
player's policy with the run's scripts, and plays it against a bot script, a bot of the run's
``[league.bots]``, another player of the checkpoint, or a snapshot ``player:version`` of the
run's Redis model pool, rotating seats. :func:`league_state` reads the newest league checkpoint's
league (for ``msagent league``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from msagent.credentials import redact
from msagent.envs.bots import RandomBot
from msagent.envs.play import SeatActor, WinDrawLoss, play_games, wdl, wilson_interval
from msagent.envs.policy_actors import MixedActor, policy_actor
from msagent.errors import MsagentError, UserError
from msagent.rundir import CONFIG_NAME, Checkpoint, RunDir
from msagent.rundir.learner_layout import LEAGUE_REQUIRED_KEYS, REQUIRED_KEYS, checkpoint_policy
from msagent.vocabulary import BOT, BUILTIN_RANDOM, LEAGUE_MIXTURE, PLAYER, SNAPSHOT, PolicyRef

SINGLE_POLICY = "main"
"""The player name of a one-policy (non-league) run's checkpoint."""


@dataclass(frozen=True)
class Evaluation:
    """The outcome of :func:`evaluate_run`.

    Attributes:
        run_dir: The run directory evaluated.
        step: The checkpoint's step.
        player: The player evaluated.
        opponent: The opponent as named in the output (``bot:random``, ``main_exploiter``,
            ``main:6`` or the bot script's path).
        seats: The game's seat names, in seat order.
        games: Games played.
        seed: Game ``g`` was reset with ``seed + g``.
        deterministic: Policies took their most likely legal action (else they sampled).
        result: The player's wins/draws/losses, overall and per seat (``result.by_seat``).
    """

    run_dir: Path
    step: int
    player: str
    opponent: str
    seats: tuple[str, ...]
    games: int
    seed: int
    deterministic: bool
    result: WinDrawLoss

    def rows(self) -> list[tuple[str, WinDrawLoss]]:
        """``("all", overall)`` then ``(seat name, that seat's tally)`` for each seat."""
        return [("all", self.result), *zip(self.seats, self.result.by_seat)]


def evaluate_run(run_dir: str | Path, player: str = SINGLE_POLICY, *, opponent: str,
                 games: int, seed: int = 0, deterministic: bool = True,
                 average: int = 1) -> Evaluation:
    """Play ``player`` of the run's newest readable checkpoint against ``opponent``.

    Args:
        run_dir: A directory ``msagent train`` wrote (``config.toml`` + ``checkpoints/``).
        player: A player of the checkpoint (a one-policy run has the single player ``main``).
        opponent: A bot script path (``.py``), a bot name of the run's ``[league.bots]``
            (``name`` or ``bot:name``), ``random`` (the built-in random bot, unless the run
            declares its own), another player of the checkpoint, or a snapshot
            ``player:version`` (only found when the run's model pool is on Redis).
        games: Games to play; the player moves one seat each game.
        seed: Game ``g`` is reset with ``seed + g``; policies sample from it with ``--sample``.
        deterministic: Policies take their most likely legal action instead of sampling.
        average: Above 1, play the mean of the player's newest ``average`` league snapshots
            in ``RUN_DIR/snapshots`` (as ``[services.evaluator] average_snapshots`` does).

    Raises:
        UserError: games < 1, average < 1, the run directory or its checkpoint is missing or
            unreadable, the player or the opponent is unknown (the message lists what can be
            used), or no snapshot of the player to average.
    """
    if games < 1:
        raise UserError(f"--games must be at least 1, got {games}")
    if average < 1:
        raise UserError(f"--average must be at least 1, got {average}")
    path, cfg = _open(run_dir)
    found = _checkpoint(path, cfg)
    players = _players(found)
    if player not in players and player != LEAGUE_MIXTURE:
        raise UserError(f"unknown player {player!r}: the checkpoint of {path} has the players "
                        f"{', '.join(players)} (and {LEAGUE_MIXTURE!r}: the league's mixture)")
    sc = cfg.scripts
    build = _builder(cfg)
    if player == LEAGUE_MIXTURE:
        me, name = _mixture_actor(path, found, build, seed, deterministic)
    else:
        weights, name = ((_weights(found, player), player) if average == 1
                         else _averaged(path, player, average))
        me = policy_actor(build(seed, player), weights, deterministic)

    from msagent.user_scripts import game_factory

    factory, seats = game_factory(str(sc.env), dict(cfg.env)), []

    def make() -> Any:
        env = factory()
        seats[:] = list(env.seats)
        return env

    probe = make()
    space = probe.action_space
    probe.close()
    label, them = _opponent(opponent, path, cfg, found, build, seed + 1, deterministic, space)
    if len(seats) < 2:
        raise UserError(f"cannot evaluate against an opponent: the game of {sc.env} has "
                        f"{len(seats)} seat(s); evaluation needs two or more")
    actors: list[SeatActor] = [me] + [them] * (len(seats) - 1)
    records = play_games(make, actors, games, seed, rotate=True)
    return Evaluation(path, found.step, name, label, tuple(str(s) for s in seats), games, seed,
                      deterministic, wdl(records, 0))


def saved_policy(run_dir: str | Path, player: str, average: int = 1) -> tuple[Any, int]:
    """``player``'s policy as the run's newest readable checkpoint holds it (above 1,
    ``average``: the mean of its newest snapshots, as ``evaluate_run`` plays), and that step."""
    path, cfg = _open(run_dir)
    found = _checkpoint(path, cfg)
    policy = _builder(cfg)(0, player)
    policy.set_weights(_weights(found, player) if average == 1
                       else _averaged(path, player, average)[0])
    policy.invalidate_cache()
    return policy, found.step


def league_state(run_dir: str | Path) -> tuple[int, dict[str, Any]]:
    """``(step, League.state_dict())`` of the run's newest readable league checkpoint.

    Raises:
        UserError: the run directory is missing, or holds no readable league checkpoint.
    """
    path = _run_path(run_dir)
    run = RunDir(path)
    _refuse_exact_psro(run)
    _refuse_single_policy(run)
    steps = run.checkpoint_steps()
    found, skipped = run.checkpoints.latest_with_report(LEAGUE_REQUIRED_KEYS)
    if found is None:
        why = (f"no checkpoint in {run.checkpoint_dir}" if not steps else
               f"none of its {len(steps)} checkpoint(s) is a readable league checkpoint ("
               + "; ".join(str(s) for s in skipped) + ")")
        raise UserError(f"{path} has no league checkpoint: {why}")
    return found.step, found.state["league"]


def evaluation_table(evaluation: Evaluation) -> Table:
    """The evaluation as a rich table: one row overall, then one per seat."""
    e = evaluation
    mode = "deterministic" if e.deterministic else "sampled"
    table = Table(title=f"{e.player} vs {e.opponent} ({e.games} games, checkpoint step {e.step}, "
                        f"{mode}, seed {e.seed})")
    table.add_column("opponent", no_wrap=True)
    table.add_column("seat", no_wrap=True)
    for name in ("games", "win", "draw", "loss", "win 95% CI", "loss 95% CI"):
        table.add_column(name, justify="right", no_wrap=True)
    for seat, tally in e.rows():
        table.add_row(e.opponent, seat, str(tally.games), f"{tally.win_rate:.3f}",
                      f"{tally.draw_rate:.3f}", f"{tally.loss_rate:.3f}",
                      _interval(tally.win_interval),
                      _interval(wilson_interval(tally.losses, tally.games)))
    return table


def evaluation_text(evaluation: Evaluation, width: int = 120) -> str:
    """:func:`evaluation_table` as plain text."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(evaluation_table(evaluation))
    return console.file.getvalue()  # type: ignore[attr-defined]


def _interval(bounds: tuple[float, float]) -> str:
    """``[lo, hi]`` with three decimals."""
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def _run_path(run_dir: str | Path) -> Path:
    """The run directory, refusing a missing one."""
    path = Path(run_dir).expanduser()
    if not path.is_dir():
        raise UserError(f"run directory {path} does not exist")
    return path.absolute()


def _open(run_dir: str | Path) -> tuple[Path, Any]:
    """The run directory and its resolved config."""
    from msagent.config import load_config

    path = _run_path(run_dir)
    if not (path / CONFIG_NAME).is_file():
        raise UserError(f"{path} is not an msagent run directory (no {CONFIG_NAME}); pass a "
                        "directory that `msagent train` created")
    return path, load_config(path / CONFIG_NAME, [])


def _checkpoint(path: Path, cfg: Any) -> Checkpoint:
    """The newest checkpoint that reads back with the keys of the run's kind."""
    run = RunDir(path)
    _refuse_exact_psro(run)
    steps = run.checkpoint_steps()
    if not steps:
        raise UserError(f"{path} has no checkpoint yet (nothing complete in "
                        f"{run.checkpoint_dir})")
    keys = REQUIRED_KEYS if cfg.league is None else LEAGUE_REQUIRED_KEYS
    found, skipped = run.checkpoints.latest_with_report(keys)
    if found is None:
        raise UserError(f"none of the {len(steps)} checkpoint(s) of {path} can be read: "
                        + "; ".join(str(s) for s in skipped))
    return found


def _is_league(found: Checkpoint) -> bool:
    """A league checkpoint (players' parts under ``learners``)."""
    return "learners" in found.state


def _players(found: Checkpoint) -> list[str]:
    """The players a checkpoint holds."""
    return list(found.state["learners"]) if _is_league(found) else [SINGLE_POLICY]


def _weights(found: Checkpoint, player: str) -> dict[str, Any]:
    """``player``'s policy weights in the checkpoint."""
    return checkpoint_policy(found, player)


def _averaged(path: Path, player: str, count: int) -> tuple[dict[str, Any], str]:
    """The mean weights of ``player``'s newest ``count`` snapshots in the run directory, and
    the name the table gives them."""
    from msagent.policy.averaging import mean_weights
    from msagent.rundir import RunDir

    files = RunDir(path).snapshots
    keys = files.newest(player, count)
    if not keys:
        raise UserError(f"--average {count}: {files.folder} holds no snapshot of {player!r} "
                        "(league runs write one per league snapshot)")
    name = f"{player} (mean of {keys[0]}..{keys[-1]}, {len(keys)} snapshots)"
    return mean_weights([files.load(k) for k in keys]), name


def _mixture_actor(path: Path, found: Checkpoint, build: Callable[..., Any], seed: int,
                   deterministic: bool) -> tuple[SeatActor, str]:
    """The league's mixture of the checkpoint as a seat actor (one snapshot per game, drawn
    by its weights for the seat), and its name."""
    mixture = (found.state.get("league") or {}).get("mixture")
    if not mixture:
        raise UserError(f"the checkpoint of {path} holds no league mixture ([league.mixture]: "
                        "small two-seat OpenSpiel games)")
    from msagent.psro.league_mixture import members_and_weights

    members, weights = members_and_weights(mixture)
    files = RunDir(path).snapshots
    actors = [policy_actor(build(seed, PolicyRef.parse(m).name),
                           files.load(PolicyRef.parse(m).key), deterministic) for m in members]
    return MixedActor(actors, weights, seed), f"league (mixture of {len(members)} snapshots)"


def _builder(cfg: Any) -> Callable[..., Any]:
    """``build(seed, player)``: a fresh policy of the run's scripts and the player's network."""
    from msagent.user_scripts import build_policy

    return lambda seed, player: build_policy(str(cfg.scripts.env), str(cfg.agent_of(player)),
                                             dict(cfg.env), seed)


def _opponent(text: str, path: Path, cfg: Any, found: Checkpoint, build: Callable[..., Any],
              seed: int, deterministic: bool, space: Any) -> tuple[str, SeatActor]:
    """The opponent's label and seat actor (``space``: the game's actions, for the built-in
    random bot)."""
    bots = dict(cfg.league.bots) if cfg.league is not None else {}
    players = _players(found)
    if text.endswith(".py") or Path(text).expanduser().is_file():
        script = Path(text).expanduser()
        if not script.is_file():
            raise UserError(f"bot script {text} does not exist")
        return text, _bot(str(script), "", seed, space)
    ref = PolicyRef.parse(text)
    if ref.kind == PLAYER and ref.name in players:
        return ref.name, policy_actor(build(seed, ref.name), _weights(found, ref.name),
                                       deterministic)
    if ref.kind in (PLAYER, BOT) and ref.name in bots:
        return f"bot:{ref.name}", _bot(bots[ref.name], ref.name, seed, space)
    if ref.kind in (PLAYER, BOT) and ref.name == RandomBot.name:
        return "bot:random (built in)", RandomBot(space, seed)
    if ref.kind == SNAPSHOT:
        weights = _snapshot_weights(ref, path, cfg, found, _usable(players, bots))
        return str(ref), policy_actor(build(seed, ref.name), weights, deterministic)
    what = "bot" if ref.kind == BOT else "player or bot"
    raise UserError(f"unknown opponent {text!r} (no such {what} in {path}); "
                    + _usable(players, bots))


def _bot(path: str, name: str, seed: int, space: Any) -> SeatActor:
    """The bot of a ``[league.bots]`` entry or a script (the built-in random bot acting in
    ``space``); a script that defines ``seed(n)`` is seeded, so runs repeat."""
    from msagent.envs.bots import make_bot
    from msagent.user_scripts import load_script

    bot = make_bot(path, name, lambda: space, seed)
    if path == BUILTIN_RANDOM:
        return bot
    seeder = getattr(load_script(path), "seed", None)
    if callable(seeder):
        seeder(seed)
    return bot


def _usable(players: list[str], bots: dict[str, str]) -> str:
    """What ``--opponent`` accepts for this run, in one sentence."""
    named = ", ".join([f"bot:{b}" for b in bots]
                      + ([] if RandomBot.name in bots else ["random (built in)"]))
    return (f"use a bot script (.py), a bot ({named}), a player ({', '.join(players)}) or a "
            "snapshot player:version of a run whose model pool is on Redis")


def _snapshot_weights(ref: PolicyRef, path: Path, cfg: Any, found: Checkpoint,
                      usable: str) -> dict[str, Any]:
    """A snapshot's weights from the run's Redis model pool."""
    url = cfg.services.model_pool.url
    if not url or url.strip().lower() == "memory":
        known = [h["ref"] for h in found.state.get("league", {}).get("historical", [])]
        hint = f" (the league knew the snapshots {', '.join(known)})" if known else ""
        raise UserError(f"cannot find snapshot {ref}: the run's model pool was in memory "
                        f"(services.model_pool.url is not set), so its snapshots ended with the "
                        f"run{hint}; {usable}")
    from msagent.model_pool import ModelPool, SnapshotNotFoundError, make_store
    from msagent.model_pool.stores.redis_store import DEFAULT_PREFIX

    run_id = found.state.get("run", {}).get("run_id") or _marker_run_id(path)
    pool = ModelPool(make_store(url, prefix=f"{DEFAULT_PREFIX}:{run_id}"), keep_last=None)
    try:
        return dict(pool.pull(ref.key).weights)
    except SnapshotNotFoundError:
        held = [str(key) for key in pool.list()]
        have = (f"it holds {', '.join(held)}" if held else "it holds no snapshot")
        raise UserError(f"snapshot {ref} is not in the run's model pool ({redact(url)}): "
                        f"{have}; {usable}") from None
    except MsagentError:
        raise
    except Exception as exc:  # redis connection errors and the like
        raise UserError(f"cannot read snapshot {ref} from the model pool at {redact(url)}: "
                        f"{type(exc).__name__}: {exc}") from exc
    finally:
        pool.store.close()


def _marker_run_id(path: Path) -> str:
    """The run id of the run directory's marker (its name when there is none)."""
    try:
        return RunDir(path).run_id
    except (OSError, ValueError):
        return path.name


def _refuse_single_policy(run: RunDir) -> None:
    """A clear error for a run whose saved config has no ``[league]``: it has no league."""
    import tomllib

    try:
        config = tomllib.loads(run.config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no readable config: the checkpoints say what they hold
    if "league" not in config:
        raise UserError(f"{run.path} is a single-policy run (its config.toml has no [league] "
                        "table), so it has no league to show or opponents to play")


def _refuse_exact_psro(run: RunDir) -> None:
    """A clear error for an exact PSRO run, whose members are tables, not networks."""
    from msagent.psro.checkpoint import REQUIRED_KEYS as PSRO_KEYS, newest_checkpoint

    found = newest_checkpoint(run)
    if found is not None and all(k in found.state for k in PSRO_KEYS):
        raise UserError(f"{run.path} is a PSRO run with the exact oracle: its population is "
                        "tabular policies, not a league of networks; write its mixture with "
                        f"`msagent export {run.path} OUT`")
