"""The ``msagent`` command line: ``msagent train CONFIG`` and ``msagent version``."""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.pretty import Pretty
from rich.text import Text

from msagent.errors import ConfigError

if TYPE_CHECKING:
    from msagent.config import TrainConfig
    from msagent.rundir import RunDir

CONFIG_ERROR_EXIT = 2
INTERRUPTED_EXIT = 130

app = typer.Typer(
    name="msagent", help="League training for game AI, from one laptop to a cluster.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False,
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
) -> None:
    """Train the policies a TOML config describes, writing a run directory."""
    out = Console(soft_wrap=True)
    try:
        cfg = load(config, list(set_ or []), mode, address)
        run_training = training_entry()
        from msagent.train import check_supported

        check_supported(cfg)  # refuse before a run directory is made
        run_dir = open_run_dir(cfg, resume)
        out.print(Text(f"run directory: {run_dir.path}", style="bold"))
        result = run(run_training, cfg, run_dir, resume is not None)
    except ConfigError as exc:
        _fail(str(exc), CONFIG_ERROR_EXIT)
    except KeyboardInterrupt:
        _fail("interrupted", INTERRUPTED_EXIT)
    out.print(Text("result:", style="bold green"), Pretty(result))
    if result_json is not None:
        result_json.write_text(json.dumps(result, indent=2))


@app.command()
def version() -> None:
    """Print msagent's version."""
    from msagent import __version__

    typer.echo(__version__)


def load(config: Path, overrides: list[str], mode: Mode | None, address: str | None) -> TrainConfig:
    """Load the config with ``--set`` overrides, then the ``--mode``/``--address`` flags."""
    from msagent.config import load_config

    if address is not None:
        overrides.append(f"run.address={json.dumps(address)}")
        mode = mode or Mode.ray
    if mode is not None:
        overrides.append(f"run.mode={json.dumps(mode.value)}")
    return load_config(config, overrides)


def open_run_dir(cfg: TrainConfig, resume: Path | None) -> RunDir:
    """A fresh run directory (or the one to resume) holding the resolved config."""
    from msagent.config import dump_config
    from msagent.rundir import RunDir

    if resume is not None:
        run_dir = RunDir.open(resume)
    else:
        run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_dir.write_config(dump_config(cfg))
    return run_dir


def training_entry() -> Callable[..., Any]:
    """``msagent.train.run_training``, imported only when training (it pulls in everything)."""
    try:
        from msagent.train import run_training
    except ModuleNotFoundError as exc:
        if exc.name != "msagent.train":
            raise
        _fail("msagent.train is missing from this installation of msagent", 1)
    return run_training


def run(
    run_training: Callable[..., Any], cfg: TrainConfig, run_dir: RunDir, resume: bool
) -> Any:
    """Hand over to the training wiring, logging into the run directory meanwhile."""
    from msagent.telemetry import log_to_file

    with log_to_file(run_dir.log_path):
        return run_training(cfg, run_dir=run_dir, resume=resume)


def _fail(message: str, code: int) -> NoReturn:
    """Print ``message`` in red on stderr (no traceback) and exit with ``code``."""
    Console(stderr=True, soft_wrap=True).print(Text(message, style="red"))
    raise typer.Exit(code)
