"""A protocol-level fake of DareFightingICE's game server, for tests and smoke runs without Java.

It speaks the game's own socket protocol (opcodes, length-prefixed protobuf messages of the
game's ``.proto`` files, through pyftg's stubs) on 127.0.0.1, plays games back to back like
the game in ``--pyftg-mode --input-sync`` (each frame waits for both seats' keys), and its
fight is :mod:`fake_physics`. Run it with
``python -m msagent.envs.games.fightingice.fake_server --port N [--limithp HP HP] [-r ROUNDS]
[-f FRAMES]`` (the game's own option names).
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading

from msagent.envs.games.fightingice.fake_physics import Fight
from msagent.envs.games.fightingice.launcher import READY_LINE
from msagent.envs.games.fightingice.protocol import (
    CLOSE_GAME,
    CLOSED,
    PLAY,
    RUN_GAME,
    STATE,
    enum_pb2,
    message_pb2,
    recv_exact,
    recv_message,
    send_message,
    service_pb2,
)


class FakeGameServer:
    """Accepts seats and game requests; runs one game at a time."""

    def __init__(self, port: int, hp: int, rounds: int, round_frames: int) -> None:
        """A server for games of ``rounds`` rounds of ``round_frames`` frames at ``hp`` HP."""
        self.port, self.hp, self.rounds, self.round_frames = port, hp, rounds, round_frames
        self.players: list[socket.socket | None] = [None, None]
        self.running = False
        self.lock = threading.Lock()

    def serve(self) -> None:
        """Listen on 127.0.0.1 and answer connections until a close request."""
        listener = socket.create_server(("127.0.0.1", self.port))
        print(f"Socket server is started, listening on {self.port}\n{READY_LINE}", flush=True)
        while True:
            conn, _ = listener.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                opcode = recv_exact(conn, 1)[0]
                if opcode == PLAY:
                    self._seat(conn)
                elif opcode == RUN_GAME:
                    self._run_request(conn)
                elif opcode == CLOSE_GAME:
                    return
            except (OSError, ConnectionError) as exc:
                print(f"connection failed: {exc}", flush=True)

    def _seat(self, conn: socket.socket) -> None:
        """A seat's connection (P1 or P2), replacing an earlier one."""
        request = service_pb2.InitializeRequest()
        request.ParseFromString(recv_message(conn))
        index = 0 if request.player_number else 1
        with self.lock:
            old, self.players[index] = self.players[index], conn
        if old is not None:
            _close_seat(old)

    def _run_request(self, conn: socket.socket) -> None:
        """Start a game if both seats are connected and none is running."""
        request = service_pb2.RunGameRequest()
        request.ParseFromString(recv_message(conn))
        with self.lock:
            ready = not self.running and all(p is not None for p in self.players)
            players = list(self.players)
            self.running = self.running or ready
        code = enum_pb2.SUCCESS if ready else enum_pb2.FAILED
        text = "Success" if ready else "The game is not ready for running the game."
        response = service_pb2.RunGameResponse(status_code=code, response_message=text)
        send_message(conn, response.SerializeToString())
        if ready:
            names = (request.player_1, request.player_2)
            chars = (request.character_1, request.character_2)
            threading.Thread(target=self._game, args=(conn, players, names, chars),
                             daemon=True).start()

    def _game(self, conn: socket.socket, players: list[socket.socket], names: tuple[str, str],
              chars: tuple[str, str]) -> None:
        """Play the game, then tell the requester and close both seats."""
        try:
            game_data = message_pb2.GrpcGameData(max_hps=[self.hp] * 2, max_energies=[300] * 2,
                                                 character_names=chars, ai_names=names)
            self._send_all(players, service_pb2.PlayerGameState(
                state_flag=enum_pb2.INITIALIZE, game_data=game_data))
            for round_number in range(1, self.rounds + 1):
                self._round(players, round_number)
        except (OSError, ConnectionError) as exc:
            print(f"game abandoned: {exc}", flush=True)
        finally:
            _send_done(conn)
            for sock in players:
                _close_seat(sock)
            with self.lock:
                self.players = [None if p in players else p for p in self.players]
                self.running = False

    def _round(self, players: list[socket.socket], round_number: int) -> None:
        """One round: a state to both seats and both keys back, every frame."""
        fight = Fight(self.hp)
        frame = 0
        while frame < self.round_frames and not fight.over():
            data = fight.frame_data(frame, round_number)
            state = service_pb2.PlayerGameState(
                state_flag=enum_pb2.PROCESSING, is_control=True, frame_data=data,
                non_delay_frame_data=data)
            self._send_all(players, state)
            keys = []
            for sock in players:
                key = message_pb2.GrpcKey()
                key.ParseFromString(recv_message(sock))
                keys.append(key)
            fight.step((keys[0], keys[1]))
            frame += 1
        hps = [f.hp for f in fight.fighters]
        flag = enum_pb2.GAME_END if round_number == self.rounds else enum_pb2.ROUND_END
        result = message_pb2.GrpcRoundResult(current_round=round_number, remaining_hps=hps,
                                             elapsed_frame=frame)
        self._send_all(players, service_pb2.PlayerGameState(state_flag=flag,
                                                            round_result=result))

    @staticmethod
    def _send_all(players: list[socket.socket], state: service_pb2.PlayerGameState) -> None:
        """Send one state to both seats."""
        payload = state.SerializeToString()
        for sock in players:
            sock.sendall(bytes([STATE]))
            send_message(sock, payload)


def _close_seat(sock: socket.socket) -> None:
    """Tell a seat its game is over and close it."""
    try:
        sock.sendall(bytes([CLOSED]))
    except OSError:
        pass
    sock.close()


def _send_done(sock: socket.socket) -> None:
    """Tell the requester its game is over."""
    try:
        sock.sendall(bytes([0]))
    except OSError:
        pass
    sock.close()


def main(argv: list[str] | None = None) -> None:
    """Parse the game's options and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--limithp", type=int, nargs=2, default=(400, 400))
    parser.add_argument("-r", dest="rounds", type=int, default=3)
    parser.add_argument("-f", dest="frames", type=int, default=3600)
    args = parser.parse_args(argv)
    try:
        FakeGameServer(args.port, args.limithp[0], args.rounds, args.frames).serve()
    except OSError as exc:
        print(f"Fail to start the server: {exc}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
