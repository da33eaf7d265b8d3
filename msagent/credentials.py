"""Passwords in connection URLs: kept out of configs, and never shown.

A configured Redis URL (``[gateway] redis_url``, ``[services.model_pool] url``, the league
mirror's) may name its password instead of holding it::

    redis://:${REDIS_PASSWORD}@10.0.0.5:6379/0              from an environment variable
    redis://:${file:/run/secrets/redis}@10.0.0.5:6379/0     from a file (trailing newline dropped)

:func:`expand` replaces the placeholders only where a connection is made, so the config
object, a run directory's ``config.toml``, logs and the dashboard hold the placeholder, never
the secret. The value is percent-encoded (any password works; redis-py decodes it). A literal
``$`` followed by ``{`` is written ``%24{``.

:func:`redact` and :func:`redact_text` replace a password with ``***`` wherever a URL or a
whole text (a TOML file) is printed or shown; a password made only of placeholders is shown
as it is (it holds no secret).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from msagent.errors import ConfigError

STARS = "***"
"""What a password is shown as."""

_PLACEHOLDER = re.compile(r"\$\{([^{}]*)\}")
_ONLY_PLACEHOLDERS = re.compile(r"(?:\$\{[^{}]*\})+")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Hand-written (no URL parser): a password may hold "/", "@" or "#" a parser splits at, and a
# text holds URLs among other words. The user part stops at ":", "/" or "@"; the password runs
# to the last "@" of the URL (as urllib's own password parsing does).
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'\"<>]*):"
                       r"(?P<password>[^\s'\"<>]*)@")
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)(?P<password>[^&#\s'\"<>]*)")


def expand(url: str) -> str:
    """The URL with each ``${VAR}`` / ``${file:/path}`` replaced by its percent-encoded value,
    at connection time (ConfigError names a variable that is not set or a file not read)."""
    return _PLACEHOLDER.sub(lambda found: quote(_secret(found.group(1)), safe=""), url)


def _secret(name: str) -> str:
    """The value one placeholder names."""
    if name.startswith("file:"):
        path = Path(name.removeprefix("file:")).expanduser()
        try:
            return path.read_text(encoding="utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the secret file {path} named by ${{{name}}} in a "
                              f"Redis URL: {getattr(exc, 'strerror', None) or exc}") from None
    if not _VARIABLE.fullmatch(name):
        raise ConfigError(f"${{{name}}} in a Redis URL names no environment variable: write "
                          "${NAME} or ${file:/path}")
    value = os.environ.get(name)
    if value is None:
        raise ConfigError(f"environment variable {name} is not set (named by ${{{name}}} in a "
                          "Redis URL)")
    return value


def redact(url: str) -> str:
    """The URL with its password shown as ``***``, for printing and logging."""
    return redact_text(url)


def redact_text(text: str) -> str:
    """A text (a config file, a log line) with every URL's password shown as ``***``."""
    text = _USERINFO.sub(_starred, text)
    return _QUERY_PASSWORD.sub(_starred, text)


def _starred(found: re.Match[str]) -> str:
    """One match with its password replaced (an empty one, or one of placeholders only, is
    kept: it holds no secret)."""
    password, start = found.group("password"), found.start()
    shown = password if not password or _ONLY_PLACEHOLDERS.fullmatch(password) else STARS
    whole = found.group(0)
    return whole[:found.start("password") - start] + shown + whole[found.end("password") - start:]
