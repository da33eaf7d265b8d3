"""Read a TOML training config (with ``--set`` overrides) into a TrainConfig, and write one back."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from msagent.config.general import BASE_DIR_KEY
from msagent.config.messages import describe
from msagent.config.overrides import apply_overrides
from msagent.config.schema import TrainConfig
from msagent.errors import ConfigError

_HEADER = "# msagent training config, as resolved (defaults filled in, script paths absolute)\n"


def load_config(path: str | Path, overrides: Iterable[str] = ()) -> TrainConfig:
    """Load, override and validate a config, so a bad one fails before anything starts.

    Args:
        path: The TOML file; relative ``[scripts]`` paths start from its folder.
        overrides: ``a.b.c=value`` strings applied in order after reading the file.

    Returns:
        The validated config.

    Raises:
        ConfigError: On any problem, naming the file, the dotted key and what was expected.
    """
    path = Path(path).expanduser().absolute()
    data = read_toml(path)
    try:
        set_keys = apply_overrides(data, overrides)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return validate_config(data, path.parent, str(path), set_keys)


def validate_config(
    data: Mapping[str, Any], base_dir: str | Path, source: str = "<dict>",
    set_keys: Iterable[str] = (),
) -> TrainConfig:
    """Validate already-parsed TOML data, resolving script paths against ``base_dir``.

    Raises:
        ConfigError: Listing every bad key of ``source``.
    """
    try:
        return TrainConfig.model_validate(dict(data), context={BASE_DIR_KEY: Path(base_dir)})
    except ValidationError as exc:
        raise ConfigError(describe(exc, TrainConfig, source, set(set_keys))) from None


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file, turning every way that can fail into a ConfigError naming it."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML syntax error: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None


def dump_config(cfg: TrainConfig) -> str:
    """Render the resolved config as TOML that :func:`load_config` reads back to an equal one.

    Uses ``tomli_w`` where installed, else msagent's small writer (same data, same reload).
    """
    try:
        from tomli_w import dumps
    except ImportError:  # not a declared dependency yet
        from msagent.config.toml_writer import dumps
    return _HEADER + dumps(cfg.to_toml_dict())
