"""Per-client API tokens of the gateway, stored hashed in ``<data_dir>/tokens.json``.

A token is ``msa_`` plus 32 random bytes (URL-safe base64); only its sha256 is written, so a
leaked token file lets nobody in. Each token has a short public id (what ``msagent tokens
list`` shows and ``revoke`` takes), the client's name (the provenance of its uploads), scopes
(``upload``, ``download``, ``admin``), an optional expiry and a revoked flag. The file is
replaced atomically (mode 0600) under an advisory lock, and a running gateway re-reads it
when it changes (checked at most once a second), so a revocation needs no restart.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from msagent.errors import UserError

SCOPES = ("upload", "download", "admin")
"""What a token may allow: uploading episodes, downloading models and schemas, admin stats."""

TOKEN_PREFIX = "msa_"
"""Every token starts with this (so a leaked one is easy to grep for)."""

TOKENS_FILE = "tokens.json"
"""The token file's name under the gateway's data folder."""

CLIENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""What a client's name may look like (it goes into Redis keys and stored provenance)."""

_log = logging.getLogger(__name__)

RELOAD_CHECK_S = 1.0
"""How often (at most) a running gateway looks whether the token file changed."""


class TokenError(UserError, ValueError):
    """A bad client name, scope or expiry, or a revoke that matches no token."""


@dataclass(frozen=True)
class Principal:
    """Who an accepted token belongs to and what it may do."""

    client: str
    scopes: frozenset[str]
    token_id: str


@dataclass(frozen=True)
class TokenEntry:
    """One token as stored: never the token itself, only its sha256 (hex)."""

    token_id: str
    client: str
    scopes: tuple[str, ...]
    sha256: str
    created_at: float
    expires_at: float | None = None
    revoked: bool = False

    def usable(self, now: float) -> bool:
        """Neither revoked nor expired at ``now``."""
        return not self.revoked and (self.expires_at is None or now < self.expires_at)


def hash_token(token: str) -> str:
    """The sha256 (hex) a token is stored and looked up by."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TokenStore:
    """The token file of one gateway: create, list, revoke, authenticate.

    Args:
        path: The JSON file (created on the first ``create``).
        clock: Wall-clock time (for expiry); injectable for tests.
    """

    def __init__(self, path: str | os.PathLike[str], clock: Callable[[], float] = time.time):
        self.path = Path(path)
        self._clock = clock
        self._by_hash: dict[str, TokenEntry] = {}
        self._accepted: dict[str, tuple[TokenEntry, Principal]] = {}
        """Tokens that authenticated since the file was last read: a valid token's next
        requests need no sha256. Only tokens in the file get in, so it stays that small."""
        self._stamp: tuple[int, int, int] | None = None
        self._next_check = 0.0

    @classmethod
    def of_data_dir(cls, data_dir: str | os.PathLike[str]) -> TokenStore:
        """The store of a gateway's data folder."""
        return cls(Path(data_dir) / TOKENS_FILE)

    def create(self, client: str, scopes: Iterable[str],
               expires_days: float | None = None) -> tuple[str, str]:
        """A new token for ``client``: ``(token_id, token)``; the token is shown only now."""
        scopes = _check_scopes(scopes)
        if not isinstance(client, str) or not CLIENT_NAME.match(client):
            raise TokenError(f"bad client name {client!r}: 1-64 of [A-Za-z0-9_.-], starting "
                             "with a letter or digit")
        if expires_days is not None and not expires_days > 0:
            raise TokenError(f"expires_days must be positive, got {expires_days}")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = self._clock()
        with self._locked() as entries:
            entry = TokenEntry(_new_id(entries), client, scopes, hash_token(token), now,
                               None if expires_days is None else now + expires_days * 86400)
            self._save([*entries, entry])
        return entry.token_id, token

    def list(self) -> list[TokenEntry]:
        """Every token entry, oldest first (hashes included: callers must not print them)."""
        return self._read()

    def revoke(self, client_or_id: str) -> list[TokenEntry]:
        """Revoke the token with this id, or every token of this client; the entries revoked."""
        with self._locked() as entries:
            hit = [e for e in entries if client_or_id in (e.token_id, e.client)]
            if not hit:
                raise TokenError(f"no token has id or client {client_or_id!r}")
            ids = {e.token_id for e in hit}
            self._save([TokenEntry(**{**asdict(e), "revoked": True}) if e.token_id in ids
                        else e for e in entries])
        return [TokenEntry(**{**asdict(e), "revoked": True}) for e in hit]

    def authenticate(self, token: str) -> Principal | None:
        """Who the token belongs to; None for an unknown, revoked or expired token."""
        self._refresh()
        known = self._accepted.get(token)  # no hash per request for a token seen before
        if known is not None:
            entry, principal = known
            return principal if entry.usable(self._clock()) else None
        digest = hash_token(token)
        entry = self._by_hash.get(digest)
        if entry is None or not hmac.compare_digest(entry.sha256, digest):
            return None
        if not entry.usable(self._clock()):
            return None
        principal = Principal(entry.client, frozenset(entry.scopes), entry.token_id)
        self._accepted[token] = (entry, principal)  # at most one per stored token
        return principal

    # ------------------------------------------------------------------------------ internals

    def _refresh(self) -> None:
        """Re-read the file if it changed since the last look (looking at most once a second)."""
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + RELOAD_CHECK_S
        try:
            st = self.path.stat()
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp:
            return
        try:
            self._by_hash = {e.sha256: e for e in self._read()}
            self._accepted = {}  # a revoked token must not live on here
        except TokenError as exc:  # keep the last good tokens; look again in a second
            _log.error("%s; keeping the tokens read before", exc)
            return
        self._stamp = stamp

    def _read(self) -> list[TokenEntry]:
        """The entries in the file (none if it does not exist)."""
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise TokenError(f"{self.path}: unreadable token file: {exc}") from None
        try:
            return [TokenEntry(**{**e, "scopes": tuple(e["scopes"])}) for e in raw["tokens"]]
        except (KeyError, TypeError) as exc:
            raise TokenError(f"{self.path}: malformed token file: {exc}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[TokenEntry]]:
        """The entries, read under an exclusive lock held until the caller has saved."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield self._read()

    def _save(self, entries: list[TokenEntry]) -> None:
        """Replace the file atomically (temp file, fsync, rename), readable by the owner only."""
        data = json.dumps({"tokens": [asdict(e) for e in entries]}, indent=1).encode()
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._next_check = 0.0


def _check_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """Known scopes, deduplicated in the canonical order; at least one."""
    given = set(scopes)
    unknown = given - set(SCOPES)
    if unknown or not given:
        raise TokenError(f"scopes must be one or more of {list(SCOPES)}, got {sorted(given)}")
    return tuple(s for s in SCOPES if s in given)


def _new_id(entries: list[TokenEntry]) -> str:
    """A short public token id not used yet."""
    taken = {e.token_id for e in entries}
    while (token_id := "t_" + secrets.token_hex(4)) in taken:
        pass
    return token_id
