"""DareFightingICE's socket protocol (what pyftg 2.x speaks), client side.

A client opens a TCP connection and sends one opcode byte: ``1`` to play a seat (then an
``InitializeRequest``), ``2`` to start a game (then a ``RunGameRequest``; a
``RunGameResponse`` comes back, and one byte when the game is over), ``5`` to close the game.
Messages are protobuf, each preceded by its length (4 bytes, little-endian). A player's
connection then receives, per message, a byte (``1``: a state follows, ``0``: closed) and a
``PlayerGameState``; to every ``PROCESSING`` state it answers with a ``GrpcKey``. The message
classes are pyftg's generated protobuf stubs (MIT licence); nothing here unpickles.
"""

from __future__ import annotations

import socket
import struct

from msagent.errors import ConfigError

try:
    from pyftg.protoc import enum_pb2, message_pb2, service_pb2
except ImportError as exc:  # an optional dependency
    raise ConfigError(f"FightingICE needs the package pyftg ({exc}); install it with: pip "
                      f"install --no-deps pyftg==2.3 (its generated protobuf stubs work with "
                      f"msagent's grpcio and protobuf; its own pins are older)") from exc

PLAY, RUN_GAME, CLOSE_GAME = 1, 2, 5
"""Opcodes of a new connection."""

STATE, CLOSED = 1, 0
"""What a player's connection is told before each message."""

FLAG_INITIALIZE, FLAG_PROCESSING = enum_pb2.INITIALIZE, enum_pb2.PROCESSING
FLAG_ROUND_END, FLAG_GAME_END = enum_pb2.ROUND_END, enum_pb2.GAME_END

KEY_NAMES = ("A", "B", "C", "U", "R", "D", "L")
"""The buttons of a ``GrpcKey``."""


class ConnectionClosed(ConnectionError):
    """The game closed the connection (or died)."""


def send_message(sock: socket.socket, payload: bytes) -> None:
    """Send one length-prefixed message."""
    sock.sendall(struct.pack("<i", len(payload)) + payload)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes from ``sock``.

    Raises:
        ConnectionClosed: the peer closed the connection first.
    """
    chunks, left = [], n
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise ConnectionClosed("the game closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv_message(sock: socket.socket) -> bytes:
    """One length-prefixed message."""
    (length,) = struct.unpack("<i", recv_exact(sock, 4))
    return recv_exact(sock, length) if length > 0 else b""


def connect(port: int, timeout_s: float) -> socket.socket:
    """A TCP connection to the game on 127.0.0.1:``port`` with Nagle off."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def key_message(buttons: frozenset[str]) -> bytes:
    """A serialized ``GrpcKey`` with ``buttons`` (of :data:`KEY_NAMES`) pressed."""
    return message_pb2.GrpcKey(**{name: True for name in buttons}).SerializeToString()


class PlayerConnection:
    """One seat's connection to the game: states in, keys out."""

    def __init__(self, port: int, player_one: bool, name: str, timeout_s: float) -> None:
        """Connect and announce the seat (P1 when ``player_one``)."""
        self.sock = connect(port, timeout_s)
        request = service_pb2.InitializeRequest(player_number=player_one, player_name=name,
                                                is_blind=False)
        self.sock.sendall(bytes([PLAY]))
        send_message(self.sock, request.SerializeToString())

    def receive(self) -> service_pb2.PlayerGameState:
        """The next state the game sends this seat.

        Raises:
            ConnectionClosed: the game closed the seat's connection.
        """
        if recv_exact(self.sock, 1)[0] != STATE:
            raise ConnectionClosed("the game closed the player's connection")
        state = service_pb2.PlayerGameState()
        state.ParseFromString(recv_message(self.sock))
        return state

    def send_key(self, buttons: frozenset[str]) -> None:
        """Answer a ``PROCESSING`` state with the buttons held this frame."""
        send_message(self.sock, key_message(buttons))

    def close(self) -> None:
        """Close the connection."""
        self.sock.close()


class GameRequest:
    """A started game: the connection that asked for it."""

    def __init__(self, port: int, characters: tuple[str, str], names: tuple[str, str],
                 rounds: int, timeout_s: float) -> None:
        """Ask the game on ``port`` to run one game of ``rounds`` rounds.

        Raises:
            ConnectionError: the game refused (its message is told).
        """
        self.sock = connect(port, timeout_s)
        request = service_pb2.RunGameRequest(character_1=characters[0],
                                             character_2=characters[1], player_1=names[0],
                                             player_2=names[1], game_number=rounds)
        self.sock.sendall(bytes([RUN_GAME]))
        send_message(self.sock, request.SerializeToString())
        response = service_pb2.RunGameResponse()
        response.ParseFromString(recv_message(self.sock))
        if response.status_code != enum_pb2.SUCCESS:
            self.sock.close()
            raise ConnectionError(f"the game refused to run: {response.response_message}")

    def close(self) -> None:
        """Close the connection."""
        self.sock.close()
