"""One game on a running server: both seats' connections and the request that started it."""

from __future__ import annotations

import socket
import time

from msagent.envs.games.fightingice.protocol import (
    ConnectionClosed,
    GameRequest,
    PlayerConnection,
    recv_exact,
)

NOT_READY = "not ready"
"""Part of the game's answer while it is still closing the previous game."""


class GameSession:
    """A game of ``rounds`` rounds between two connected seats (P1, P2)."""

    def __init__(self, port: int, characters: tuple[str, str], names: tuple[str, str],
                 timeout_s: float) -> None:
        """Connect both seats and ask the server for a game (retried while it is not ready).

        Raises:
            ConnectionError: the server refused or could not be reached in ``timeout_s``.
        """
        self.players = (PlayerConnection(port, True, names[0], timeout_s),
                        PlayerConnection(port, False, names[1], timeout_s))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.request = GameRequest(port, characters, names, 1, timeout_s)
                return
            except ConnectionError as exc:
                if NOT_READY not in str(exc) or time.monotonic() > deadline:
                    self.close()
                    raise
                time.sleep(0.02)

    def receive(self) -> tuple:
        """The next state of each seat (``PlayerGameState``), P1's first."""
        return self.players[0].receive(), self.players[1].receive()

    def reply(self, keys: tuple[frozenset[str], frozenset[str]]) -> None:
        """Each seat's keys for the frame just received."""
        for player, buttons in zip(self.players, keys, strict=True):
            player.send_key(buttons)

    def finish(self) -> None:
        """Wait until the server has closed this game (it can then start the next one)."""
        try:
            recv_exact(self.request.sock, 1)
            for player in self.players:
                try:
                    player.receive()
                except ConnectionClosed:
                    pass
        except (OSError, ConnectionError):
            pass
        self.close()

    def abandon(self) -> None:
        """Leave a game before its end: the server plays it out without us, then closes it."""
        for player in self.players:
            player.close()
        self.finish()

    def close(self) -> None:
        """Close every connection."""
        for player in self.players:
            player.close()
        request = getattr(self, "request", None)
        if request is not None:
            request.close()


def is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the server went away (or hung past the timeout)."""
    return isinstance(exc, (OSError, ConnectionError, socket.timeout, EOFError))
