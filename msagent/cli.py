"""The ``msagent`` command line: ``msagent train CONFIG``, ``msagent stop RUN_DIR``,
``msagent evaluate RUN_DIR``, ``msagent league RUN_DIR``, ``msagent dashboard RUN_DIR``,
``msagent export RUN_DIR OUT``, ``msagent exploit RUN_DIR``, ``msagent validate-env SCRIPT``,
the game-client gateway (``msagent serve CONFIG``, ``msagent ingest CONFIG``,
``msagent tokens create|list|revoke CONFIG``) and ``msagent version``.

Exit codes of ``msagent train``: 0 done; 2 the config or a user script is wrong (a
:class:`~msagent.errors.UserError`); 1 a runtime failure; 130 / 143 stopped cleanly by SIGINT /
SIGTERM (services stopped, final checkpoint written, result printed). One line on stderr says
why; the traceback goes to the run's ``train.log`` (and to stderr with ``--verbose``).
"""

from __future__ import annotations

import json
import traceback
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from msagent.errors import ServiceDiedError, UserError
from msagent.exits import INTERRUPTED_EXIT, RUNTIME_ERROR_EXIT, USER_ERROR_EXIT
from msagent.exits import fail as _fail

if TYPE_CHECKING:
    from msagent.config import TrainConfig
    from msagent.rundir import RunDir

CONFIG_ERROR_EXIT = USER_ERROR_EXIT

app = typer.Typer(
    name="msagent", help="League training for game AI, from one laptop to a cluster.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False,
    rich_markup_mode="markdown",  # docstrings' wrapped lines read as one paragraph
)


class Mode(str, Enum):
    """Where services run."""

    local = "local"
    ray = "ray"


@app.command()
def train(
    config: Path = typer.Argument(..., help="The training config (TOML)."),
    set_: list[str] | None = typer.Option(
        None, "--set", metavar="KEY=VALUE",
        help="Override a key, e.g. --set run.seed=3 (repeatable).",
    ),
    mode: Mode | None = typer.Option(None, help="Overrides run.mode."),
    address: str | None = typer.Option(
        None, help="Ray cluster to join (overrides run.address; implies --mode ray)."
    ),
    resume: Path | None = typer.Option(
        None, help="Continue the run in this run directory from its latest checkpoint."
    ),
    result_json: Path | None = typer.Option(
        None, help="Also write the final result to this file as JSON (for scripts)."
    ),
    verbose: bool = typer.Option(False, "--verbose", help="Print full tracebacks on errors."),
) -> None:
    """Train the policies a TOML config describes, writing a run directory."""
    out = Console(soft_wrap=True)
    run_dir: RunDir | None = None
    try:
        cfg = load(config, list(set_ or []), mode, address)
        from msagent.train.prepare import prepare

        plan, run_dir = prepare(cfg, resume, result_json,
                                lambda msg: out.print(Text(f"warning: {msg}", style="yellow")))
        out.print(Text(f"run directory: {run_dir.path}", style="bold"))
        result = run(cfg, run_dir, plan)
        _add_final_evaluation(cfg, run_dir, result, out)
    except KeyboardInterrupt:
        _fail("interrupted", INTERRUPTED_EXIT)
    except Exception as exc:  # every failure: one line here, the traceback in train.log
        _fail_with(exc, config, run_dir, verbose)
    from msagent.telemetry.result_report import print_result

    print_result(out, result)
    if result_json is not None:
        result_json.write_text(json.dumps(result, indent=2))
    if result.get("signal"):
        from msagent.train.signals import EXIT_CODES

        raise typer.Exit(EXIT_CODES.get(result["signal"], INTERRUPTED_EXIT))


def _add_final_evaluation(cfg: Any, run_dir: Any, result: dict, out: Console) -> None:
    """The saved player's games against the evaluator's opponents, into the league result."""
    from msagent.train.final_evaluation import final_evaluation

    if cfg.services.evaluator.final_games > 0 and result.get("league"):
        out.print(f"final evaluation: {cfg.services.evaluator.final_games} games against each "
                  "opponent ...")
        try:
            final = final_evaluation(cfg, run_dir, result)
        except Exception as exc:  # the run and its checkpoint are done: say so, never fail it
            out.print(f"final evaluation failed: {type(exc).__name__}: {exc}")
            return
        if final:
            result["league"]["final_eval"] = final


@app.command()
def stop(run_dir: Path = typer.Argument(..., help="The directory of a run training now.")) -> None:
    """Ask a training run to stop cleanly (final checkpoint, result), from any terminal."""
    from msagent.rundir import RunDir

    try:
        path = RunDir.open(run_dir).stop_path
    except UserError as exc:
        _fail(str(exc), USER_ERROR_EXIT)
    path.touch()
    Console(soft_wrap=True, highlight=False).print(
        f"wrote {path}: the run stops cleanly within a second (a final checkpoint, then "
        "its result); a run that is not training now removes the file when it resumes")


@app.command()
def version() -> None:
    """Print msagent's version."""
    from msagent import __version__

    typer.echo(__version__)


@app.command("validate-env")
def validate_env(
    script: Path = typer.Argument(..., help="The env script (defines make_env)."),
    set_: list[str] | None = typer.Option(
        None, "--set", metavar="KEY=VALUE", help="A make_env parameter (repeatable)."),
    steps: int = typer.Option(1000, help="Turns of random legal play to check."),
    seed: int = typer.Option(0, help="Seed of the random play."),
) -> None:
    """Check an env script; exit 0 when every check passes, 2 otherwise."""
    from msagent.validate_env import env_params, validate_env as validate

    try:
        params = env_params(set_ or [])
    except UserError as exc:
        _fail(str(exc), USER_ERROR_EXIT)
    report = validate(str(script), params, steps=steps, seed=seed)
    typer.echo(report.render())
    raise typer.Exit(0 if report.ok else USER_ERROR_EXIT)


@app.command()
def evaluate(
    run_dir: Path = typer.Argument(..., help="A run directory that `msagent train` wrote."),
    player: str = typer.Option("main", help="The player of the newest checkpoint to evaluate "
                                            "('league': the league's mixture of snapshots, one "
                                            "drawn per game)."),
    opponent: str = typer.Option(
        ..., metavar="BOT_SCRIPT|BOT_NAME|PLAYER|MODEL_KEY",
        help="A bot script (.py), a bot of [league.bots] (name or bot:name), random (a "
             "built-in bot playing uniformly random legal actions), another player of the "
             "checkpoint, or a snapshot player:version (Redis model pool only)."),
    games: int = typer.Option(..., help="Games to play; the player moves one seat each game."),
    seed: int = typer.Option(0, help="Game g is reset with seed + g."),
    sample: bool = typer.Option(False, "--sample",
                                help="Sample actions instead of taking the most likely."),
    average: int = typer.Option(1, help="Play the mean of the player's newest N league "
                                        "snapshots (RUN_DIR/snapshots) instead of its checkpoint."),
) -> None:
    """Play a run's player against an opponent; print win/draw/loss rates per seat."""
    from msagent.evaluate import evaluate_run, evaluation_table

    try:
        result = evaluate_run(run_dir, player, opponent=opponent, games=games, seed=seed,
                              deterministic=not sample, average=average)
    except UserError as exc:
        _fail(str(exc), USER_ERROR_EXIT)
    except Exception as exc:
        _fail(f"{type(exc).__name__}: {exc}", RUNTIME_ERROR_EXIT)
    out = Console(soft_wrap=True)
    if not out.is_terminal:  # piped or captured: room for the whole table
        out = Console(soft_wrap=True, width=160)
    out.print(evaluation_table(result))


@app.command()
def dashboard(
    run_dir: Path = typer.Argument(
        ..., help="A run directory, or a folder of runs (such as runs/); it may not exist yet."),
    port: int = typer.Option(8420, help="The port (0: any free port)."),
    host: str = typer.Option("127.0.0.1", help="The address to bind (loopback unless told)."),
    allow_host: list[str] | None = typer.Option(
        None, "--allow-host", metavar="NAME",
        help="A Host name (without port) the dashboard answers besides localhost, 127.0.0.1, "
             "[::1] and the bound address; repeatable. Other names get 400 (no DNS "
             "rebinding)."),
) -> None:
    """Serve the league dashboard of a run (or a folder of runs) in the browser, read-only,
    following the run live while it trains."""
    from msagent.dashboard.serve import serve

    out = Console(soft_wrap=True, highlight=False)
    try:
        serve(run_dir, host, port, say=out.print, allow_hosts=allow_host or ())
    except OSError as exc:  # e.g. the port is taken
        _fail(f"cannot serve the dashboard on {host}:{port}: {exc}", USER_ERROR_EXIT)
    except KeyboardInterrupt:
        pass
    out.print("dashboard stopped")


@app.command()
def ingest(
    config: Path = typer.Argument(..., help="The gateway config (TOML) of `msagent serve`."),
    redis_url: str | None = typer.Option(
        None, envvar="MSAGENT_REDIS_URL",  # ingest_cli.INGEST_REDIS_ENV (this module stays light)
        help="The gateway's Redis (overrides the config's gateway.redis_url). On the command "
             "line every local user sees it (ps): set the environment variable instead, or "
             "write the password as ${VAR} or ${file:/path}."),
) -> None:
    """Move uploaded episodes from the gateway's Redis stream into the experience store, until
    Ctrl-C or SIGTERM (both write what is buffered first)."""
    from msagent.config.gateway import load_gateway_config
    from msagent.experience.ingest_cli import run_ingest

    try:
        run_ingest(load_gateway_config(config), redis_url, str(config))
    except UserError as exc:
        _fail(str(exc), USER_ERROR_EXIT)


class ExportFormat(str, Enum):
    """Formats ``msagent export`` writes."""

    openspiel = "openspiel"
    onnx = "onnx"


@app.command()
def export(
    run_dir: Path = typer.Argument(..., help="A run directory that `msagent train` wrote."),
    out_file: Path = typer.Argument(..., metavar="OUT", help="The file to write."),
    format_: ExportFormat = typer.Option(
        ExportFormat.openspiel, "--format",
        help="openspiel: a tabular policy (JSON) that OpenSpiel's exploitability.nash_conv "
             "can check: a PSRO run's meta-strategy mixture, else --policy of the newest "
             "checkpoint (OpenSpiel games; simultaneous ones in turn-based form). onnx: a "
             "policy of the newest checkpoint as an ONNX graph (opset 15) for game clients, "
             "with OUT.manifest.json."),
    policy: str = typer.Option("main", help="The policy (league player) to export (onnx; "
                                            "openspiel when the run is not PSRO, where "
                                            "'league' is the league's mixture)."),
    greedy: bool = typer.Option(False, help="openspiel, not PSRO: the policy's most likely "
                                            "action at each information state (as an evaluator "
                                            "with deterministic = true plays)."),
    publish_to: str | None = typer.Option(
        None, "--publish", metavar="STORE",
        help="onnx: also publish to this model store (a folder or fsspec URI)."),
    game: str | None = typer.Option(None, help="onnx: the game's name in the model store."),
) -> None:
    """Write a run's policy (or a PSRO run's meta-strategy mixture) as a tabular policy file
    with its NashConv (openspiel), or a run's policy as ONNX for game clients (onnx)."""
    from msagent.exporting.tabular_export import export_mixture, is_psro_run
    from msagent.rundir import RunDir

    if format_ is ExportFormat.onnx:
        _export_onnx(run_dir, out_file, policy, publish_to, game)
        return
    try:
        if not is_psro_run(run_dir):
            _export_table(run_dir, out_file, policy, greedy)
            return
        path, nash_conv, iteration = export_mixture(RunDir.open(run_dir), out_file)
    except (UserError, OSError) as exc:
        _fail(str(exc), USER_ERROR_EXIT)
    Console(soft_wrap=True).print(f"wrote {path}: the mixture of PSRO iteration {iteration}, "
                                  f"NashConv {nash_conv:.6f}", highlight=False)


def _export_table(run_dir: Path, out_file: Path, policy: str, greedy: bool) -> None:
    """``export --format openspiel`` of a run that is not PSRO: one line, with the NashConv."""
    from msagent.exporting.tabular_export import export_policy_table

    done = export_policy_table(run_dir, policy, out_file, greedy)
    Console(soft_wrap=True).print(
        f"wrote {done.path}: {policy}{' (greedy)' if greedy else ''} at checkpoint step "
        f"{done.step} as a table over {done.infostates} information states, NashConv "
        f"{done.nash_conv:.6f}", highlight=False)


def _export_onnx(run_dir: Path, out_file: Path, policy: str, store: str | None,
                 game: str | None) -> None:
    """``export --format onnx``: one line on success; rc 2 for what the user can fix."""
    from msagent.exporting.model_store import ModelStoreError
    from msagent.exporting.onnx_export import ParityError
    from msagent.exporting.run_export import export_run, manifest_path, write_export

    try:
        done = export_run(run_dir, policy)
        manifest = write_export(done, out_file, store, game)
    except (UserError, ModelStoreError, OSError) as exc:
        _fail(str(exc), USER_ERROR_EXIT)
    except ParityError as exc:
        _fail(str(exc), RUNTIME_ERROR_EXIT)
    where = f"; published as {game} v{manifest['version']} in {store}" if store else ""
    Console(soft_wrap=True).print(
        f"wrote {out_file} and {manifest_path(out_file)}: {policy} at checkpoint step "
        f"{done.step}, opset {manifest['opset']}, max |ONNX - PyTorch| {done.parity:.2g}{where}",
        highlight=False)


def load(config: Path, overrides: list[str], mode: Mode | None, address: str | None) -> TrainConfig:
    """Load the config with ``--set`` overrides, then the ``--mode``/``--address`` flags."""
    from msagent.config import load_config

    if address is not None:
        overrides.append(f"run.address={json.dumps(address)}")
        mode = mode or Mode.ray
    if mode is not None:
        overrides.append(f"run.mode={json.dumps(mode.value)}")
    return load_config(config, overrides)


def run(cfg: TrainConfig, run_dir: RunDir, plan: Any) -> Any:
    """Hand over to training (which logs into the run directory's ``train.log``)."""
    if cfg.league is not None and cfg.league.psro is not None and \
            cfg.league.psro.oracle == "exact":
        from msagent.train.psro_run import run_psro

        return run_psro(cfg, run_dir, resume=plan is not None)
    from msagent.train import run_training

    return run_training(cfg, run_dir=run_dir, resume=plan or False)


def _fail_with(exc: Exception, config: Path, run_dir: RunDir | None, verbose: bool) -> NoReturn:
    """Report a failure in one line (plus what to do), with the right exit code."""
    if verbose:
        Console(stderr=True, soft_wrap=True).print(
            Text("".join(traceback.format_exception(exc)), style="dim"))
    where = f" (traceback in {run_dir.log_path})" if run_dir is not None else ""
    if isinstance(exc, UserError):  # mid-run (a checkpoint was written): it can go on, fixed
        later = (f"\nthe run stopped; once that is fixed (--set overrides the config), "
                 f"continue it from its last checkpoint with:\n  msagent train {config} "
                 f"--resume {run_dir.path}") if run_dir and run_dir.checkpoint_steps() else ""
        _fail(f"{exc}{where}{later}", USER_ERROR_EXIT)
    message = f"{type(exc).__name__}: {exc}" if not _is_msagent(exc) else str(exc)
    if isinstance(exc, ServiceDiedError) and run_dir is not None:
        message += (f"\nthe run stopped; continue it from its last checkpoint with:\n"
                    f"  msagent train {config} --resume {run_dir.path}")
    _fail(f"{message}{where}", RUNTIME_ERROR_EXIT)


def _is_msagent(exc: BaseException) -> bool:
    """Whether msagent raised it on purpose (its message is written for the user)."""
    from msagent.errors import MsagentError

    return isinstance(exc, MsagentError)


# the game-client gateway: `msagent serve CONFIG`, `msagent tokens create|list|revoke CONFIG`
from msagent.gateway.commands import serve_command, tokens_app  # noqa: E402

app.command("serve")(serve_command)
app.add_typer(tokens_app)
# approximate exploitability: `msagent exploit RUN_DIR --player P|league --budget 90s`
from msagent.exploit.command import exploit_command  # noqa: E402

app.command("exploit")(exploit_command)
# the league's ladder, lineage and heatmap, and SQL on its history: `msagent league RUN_DIR`
from msagent.league_command import league_command  # noqa: E402

app.command("league")(league_command)
