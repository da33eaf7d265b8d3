"""Per-client API tokens of the gateway, stored hashed in ``<data_dir>/tokens.json``.

A token is ``msa_`` plus 32 random bytes (URL-safe base64); only its sha256 is written, so a
leaked token file lets nobody in. Each token has a short public id (what ``msagent tokens
list`` shows and ``revoke`` takes), the client's name (the provenance of its uploads), scopes
(``upload``, ``download``, ``admin``), the games it is valid for (or all games, when the
operator asks for that), an optional expiry and a revoked flag. The file is replaced
atomically (mode 0600) under an advisory lock, and a running gateway re-reads it when it
changes: checked at most once a second (so a revocation needs no restart), and at once when a
token is not found (so a new token works on its first request).
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
from typing import Any

from msagent.errors import UserError
from msagent.experience.schema import GAME_NAME

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
    """A bad client name, scope, game or expiry, or a revoke that matches no token."""


@dataclass(frozen=True)
class Principal:
    """Who an accepted token belongs to and what it may do."""

    client: str
    scopes: frozenset[str]
    token_id: str
    games: frozenset[str] = frozenset()
    all_games: bool = False

    def may_use(self, game: str) -> bool:
        """Whether the token is valid for ``game`` (asked before whether the game exists, so
        a token cannot probe which games a gateway has)."""
        return self.all_games or game in self.games


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
    games: tuple[str, ...] = ()
    all_games: bool = False
    issued_before_games: bool = False
    """Read from a file written before tokens had games: valid for all games (as when it was
    issued) and kept marked, so the gateway can ask for it to be re-issued with ``--game``."""

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
        self._bad_stamp: tuple[int, int, int] | None = (-1, -1, -1)
        """The stamp of a file that failed to read: an unknown token does not read it again."""
        self._next_check = 0.0

    @classmethod
    def of_data_dir(cls, data_dir: str | os.PathLike[str]) -> TokenStore:
        """The store of a gateway's data folder."""
        return cls(Path(data_dir) / TOKENS_FILE)

    def create(self, client: str, scopes: Iterable[str], expires_days: float | None = None,
               games: Iterable[str] = (), all_games: bool = False) -> tuple[str, str]:
        """A new token for ``client`` valid for ``games`` (or, with ``all_games``, every game):
        ``(token_id, token)``; the token is shown only now."""
        scopes = _check_scopes(scopes)
        names = _check_games(games, all_games)
        if not isinstance(client, str) or not CLIENT_NAME.fullmatch(client):
            raise TokenError(f"bad client name {client!r}: 1-64 of [A-Za-z0-9_.-], starting "
                             "with a letter or digit")
        if expires_days is not None and not expires_days > 0:
            raise TokenError(f"expires_days must be positive, got {expires_days}")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = self._clock()
        with self._locked() as entries:
            entry = TokenEntry(_new_id(entries), client, scopes, hash_token(token), now,
                               None if expires_days is None else now + expires_days * 86400,
                               games=names, all_games=bool(all_games))
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

    def issued_before_games(self) -> list[str]:
        """Ids of usable tokens issued before tokens had games (valid for every game): the
        operator should re-issue them for their games."""
        now = self._clock()
        return [e.token_id for e in self.list() if e.issued_before_games and e.usable(now)]

    def authenticate(self, token: str) -> Principal | None:
        """Who the token belongs to; None for an unknown, revoked or expired token."""
        self._refresh()
        known = self._accepted.get(token)  # no hash per request for a token seen before
        if known is not None:
            entry, principal = known
            return principal if entry.usable(self._clock()) else None
        digest = hash_token(token)
        entry = self._by_hash.get(digest)
        if entry is None and self._reload(again=False):  # made since the last look?
            entry = self._by_hash.get(digest)
        if entry is None or not hmac.compare_digest(entry.sha256, digest):
            return None
        if not entry.usable(self._clock()):
            return None
        principal = Principal(entry.client, frozenset(entry.scopes), entry.token_id,
                              frozenset(entry.games), entry.all_games)
        self._accepted[token] = (entry, principal)  # at most one per stored token
        return principal

    # ------------------------------------------------------------------------------ internals

    def _refresh(self) -> None:
        """Re-read the file if it changed since the last look (looking at most once a second)."""
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + RELOAD_CHECK_S
        self._reload(again=True)

    def _reload(self, again: bool) -> bool:
        """Re-read the file if its stamp changed (else a stat is all it costs): whether it was
        read. A file that failed to read is read again only ``again`` (the once-a-second
        look), so a flood of unknown tokens never reads it."""
        try:
            st = self.path.stat()
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp or (stamp == self._bad_stamp and not again):
            return False
        try:
            by_hash = {e.sha256: e for e in self._read()}
        except TokenError as exc:  # keep the last good tokens; look again in a second
            _log.error("%s; keeping the tokens read before", exc)
            self._bad_stamp = stamp
            return False
        self._by_hash, self._stamp = by_hash, stamp
        self._accepted = {}  # a revoked token must not live on here
        return True

    def _read(self) -> list[TokenEntry]:
        """The entries in the file (none if it does not exist)."""
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise TokenError(f"{self.path}: unreadable token file: {exc}") from None
        try:
            return [_entry(e) for e in raw["tokens"]]
        except (KeyError, TypeError, AttributeError) as exc:
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


def warn_of_tokens_for_all_games(store: TokenStore) -> None:
    """Log one warning at a gateway's start naming the usable tokens issued before tokens had
    games: they still open every game, which the operator may not want any more."""
    try:
        ids = store.issued_before_games()
    except TokenError:  # a bad file is reported when a request reads it
        return
    if ids:
        _log.warning("tokens %s were issued before tokens were bound to games and are valid "
                     "for every game; re-issue them for their games (msagent tokens create "
                     "CONFIG --client C --scope S --game G), then revoke these",
                     ", ".join(ids))


def _check_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """Known scopes, deduplicated in the canonical order; at least one."""
    given = set(scopes)
    unknown = given - set(SCOPES)
    if unknown or not given:
        raise TokenError(f"scopes must be one or more of {list(SCOPES)}, got {sorted(given)}")
    return tuple(s for s in SCOPES if s in given)


def _check_games(games: Iterable[str], all_games: bool) -> tuple[str, ...]:
    """Game names, deduplicated in the order given; exactly one of some games or all of them
    (a token meant for every game must say so)."""
    if isinstance(games, str):
        raise TokenError(f"games must be a list of game names, got the string {games!r}")
    names = tuple(games)
    if bool(names) == bool(all_games):
        raise TokenError("a token is valid for named games or for all games: give its games "
                         "(--game NAME, repeatable) or --all-games, exactly one of the two")
    for name in names:
        if not isinstance(name, str) or not GAME_NAME.fullmatch(name):
            raise TokenError(f"bad game name {name!r}: 1-64 of [A-Za-z0-9_.-], starting with "
                             "a letter or digit")
    return tuple(dict.fromkeys(names))


def _entry(raw: dict[str, Any]) -> TokenEntry:
    """One stored entry. An entry without games was issued when tokens meant every game: it
    stays valid for all of them (refusing it would lock out deployed clients), marked so."""
    before = "games" not in raw and "all_games" not in raw
    return TokenEntry(**{**raw, "scopes": tuple(raw["scopes"]),
                         "games": tuple(raw.get("games", ())),
                         "all_games": bool(raw.get("all_games", before)),
                         "issued_before_games": bool(raw.get("issued_before_games", before))})


def _new_id(entries: list[TokenEntry]) -> str:
    """A short public token id not used yet."""
    taken = {e.token_id for e in entries}
    while (token_id := "t_" + secrets.token_hex(4)) in taken:
        pass
    return token_id
