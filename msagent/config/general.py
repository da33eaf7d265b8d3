"""The ``[run]``, ``[run.stop]``, ``[scripts]`` and ``[logging]`` tables of a training config."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from msagent.config.base import Section

if TYPE_CHECKING:
    from msagent.callbacks import CallbackSettings

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

BASE_DIR_KEY = "base_dir"
"""Validation-context key holding the directory script paths are relative to (the TOML's)."""


class StopSection(Section):
    """When training ends: as soon as ANY enabled criterion is reached (0 disables one).

    Attributes:
        env_steps: Total environment steps to train for.
        mean_return: Target mean return over the last ``return_window`` episodes.
        return_window: Episodes averaged for ``mean_return`` (and shown in the progress display).
        time_s: Wall-clock budget in seconds.
        eval_win_rate: League runs: stop once the evaluated player wins at least this share
            of the newest ``eval_games`` evaluation games against every evaluation opponent,
            from every seat (0 disables).
        eval_games: Evaluation games per opponent and seat the rate must hold over.
        nash_conv: League runs on a sequential OpenSpiel game: stop once a measure of the
            evaluated player's NashConv (``services.evaluator.nash_conv_every_s``) is at most
            this (0 disables).
    """

    env_steps: int = Field(1_000_000, ge=0)
    mean_return: float = 0.0
    return_window: int = Field(20, ge=1)
    time_s: float = Field(0.0, ge=0)
    eval_win_rate: float = Field(0.0, ge=0, le=1)
    eval_games: int = Field(200, ge=1)
    nash_conv: float = Field(0.0, ge=0)


class RunSection(Section):
    """Identity, seed and placement of one training run.

    Attributes:
        name: Prefix of the run directory's name (``<name>-YYYYmmdd-HHMMSS``).
        root: Folder run directories are created in (relative to the working directory).
        seed: Seed of everything seeded (environments, networks, sampling).
        mode: ``"local"``: one process, inline backend; ``"ray"``: services as Ray actors.
        address: Ray cluster to join in ``ray`` mode; ``""`` starts an embedded one. Ignored in
            ``local`` mode.
        torch_threads: torch intra-op threads in each service process (1 suits a small
            machine where services share the cores; 2 ran Atari's CNN PPO 18 % faster on 2 cores).
        stop: When to stop.
    """

    name: str = Field("run", max_length=100)
    root: str = Field("runs", min_length=1)
    seed: int = Field(0, ge=0)
    mode: Literal["local", "ray"] = "ray"
    address: str = ""
    torch_threads: int = Field(1, ge=1, le=256)
    stop: StopSection = Field(default_factory=StopSection)

    @field_validator("name")
    @classmethod
    def _directory_name(cls, value: str) -> str:
        """Refuse names that would not make one plain directory name."""
        if not _NAME.fullmatch(value):
            raise ValueError(
                f"expected letters, digits, '.', '_' or '-' (it names a directory), got {value!r}"
            )
        return value


class ScriptsSection(Section):
    """User code: the environment and the agent, as Python files.

    Paths are relative to the TOML file's directory and become absolute when loaded.

    Attributes:
        env: File defining ``make_env(**env_params) -> gymnasium.Env``.
        agent: File defining ``make_policy(observation_space, action_space) -> Policy``.
    """

    env: str
    agent: str

    @field_validator("env", "agent")
    @classmethod
    def _resolve(cls, value: str, info: ValidationInfo) -> str:
        """Make the path absolute (against the TOML's folder) so the run works from anywhere."""
        return str(resolve_script(value, _base_dir(info.context)))


class LoggingSection(Section):
    """What training reports while it runs.

    Attributes:
        progress: Show progress in the terminal (a live table on a TTY, plain lines otherwise).
        tensorboard: Write TensorBoard scalars into the run directory.
        log_every_s: Seconds between progress lines and TensorBoard writes.
    """

    progress: bool = True
    tensorboard: bool = True
    log_every_s: float = Field(1.0, gt=0)


class CallbacksSection(Section):
    """Your hooks (``msagent.callbacks``): a script of functions named after events.

    Attributes:
        script: File defining any of ``on_update``, ``on_snapshot``, ``on_match_result``,
            ``on_evaluation``, ``on_checkpoint`` (relative to the TOML; empty: no hooks).
        on_error: What a hook that raises does: ``continue`` (reported with its name, the run
            goes on) or ``stop`` (the run stops, naming it).
        progress: Names of your scalars (``event.log``) shown on the progress line; all of
            them reach TensorBoard and the dashboard.
    """

    script: str = ""
    on_error: Literal["continue", "stop"] = "continue"
    progress: list[str] = Field(default_factory=list)

    @field_validator("script")
    @classmethod
    def _resolve(cls, value: str, info: ValidationInfo) -> str:
        """Make the path absolute (against the TOML's folder), and check the hooks it has."""
        if not value:
            return value
        from msagent.callbacks import hook_functions

        path = str(resolve_script(value, _base_dir(info.context)))
        hook_functions(path)  # a broken script is refused here, in one line, before any start
        return path

    def settings(self) -> CallbackSettings | None:
        """What each process needs to run the hooks (None: no script)."""
        from msagent.callbacks import CallbackSettings

        return CallbackSettings(self.script, self.on_error) if self.script else None


def resolve_script(value: str, base_dir: Path) -> Path:
    """Resolve a script path against ``base_dir`` and insist it is an existing file.

    Raises:
        ValueError: If nothing is there (pydantic turns it into an error at the key).
    """
    path = (base_dir / Path(value).expanduser()).resolve()
    if not path.is_file():
        where = "" if Path(value).is_absolute() else f" (relative to {base_dir})"
        raise ValueError(f"script file not found: {path}{where}")
    return path


def _base_dir(context: Any) -> Path:
    """The folder relative script paths start from: the TOML's, else the working directory."""
    if isinstance(context, dict) and context.get(BASE_DIR_KEY) is not None:
        return Path(context[BASE_DIR_KEY])
    return Path.cwd()
