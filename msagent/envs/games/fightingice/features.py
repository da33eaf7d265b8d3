"""A seat's observation: a float32 vector built from the game's frame data, the seat's own
fighter first, positions mirrored for P2 so that both seats see themselves start on the left
(one network plays either seat)."""

from __future__ import annotations

import numpy as np

from msagent.envs.games.fightingice.protocol import enum_pb2

STAGE_WIDTH, STAGE_HEIGHT = 960.0, 640.0
"""The stage in pixels."""

MAX_ENERGY = 300.0
"""The most energy a fighter holds."""

SPEED_SCALE, DAMAGE_SCALE, MOTION_SCALE = 20.0, 100.0, 60.0
"""Typical speeds, damages and motion lengths, to bring them near [-1, 1]."""

STATES = len(enum_pb2.GrpcState.values())
MOTIONS = len(enum_pb2.GrpcAction.values())
"""Sizes of the one-hot state (stand, crouch, air, down) and motion (the game's actions)."""

PROJECTILES = 2
"""Projectiles described per side (the nearest ones; the rest are left out)."""

FIGHTER_SIZE = 6 + STATES + MOTIONS + 3 + 2
PROJECTILE_SIZE = 4
OBS_SIZE = 2 * FIGHTER_SIZE + 2 + 2 * PROJECTILES * PROJECTILE_SIZE + 1
"""Length of the observation vector."""


def observe(frame, seat: int, max_hp: float, round_frames: int) -> np.ndarray:
    """Seat ``seat``'s observation of ``frame`` (a ``GrpcFrameData``)."""
    me, them = frame.character_data[seat], frame.character_data[1 - seat]
    mirror = seat == 1
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    _fighter(out[:FIGHTER_SIZE], me, mirror, max_hp)
    _fighter(out[FIGHTER_SIZE:2 * FIGHTER_SIZE], them, mirror, max_hp)
    at = 2 * FIGHTER_SIZE
    out[at] = _x(them.x, mirror) - _x(me.x, mirror)
    out[at + 1] = (them.y - me.y) / STAGE_HEIGHT
    at += 2
    own = [p for p in frame.projectile_data if p.player_number == (seat == 0)]
    other = [p for p in frame.projectile_data if p.player_number != (seat == 0)]
    for group in (own, other):
        _projectiles(out[at:at + PROJECTILES * PROJECTILE_SIZE], group, me, mirror)
        at += PROJECTILES * PROJECTILE_SIZE
    out[at] = 1.0 - min(frame.current_frame_number / max(round_frames, 1), 1.0)
    return out


def _x(x: float, mirror: bool) -> float:
    """A horizontal position in [0, 1], mirrored for P2."""
    return 1.0 - x / STAGE_WIDTH if mirror else x / STAGE_WIDTH


def _fighter(out: np.ndarray, c, mirror: bool, max_hp: float) -> None:
    """One fighter's features into ``out``."""
    sign = -1.0 if mirror else 1.0
    out[0] = c.hp / max_hp
    out[1] = c.energy / MAX_ENERGY
    out[2] = _x(c.x, mirror)
    out[3] = c.y / STAGE_HEIGHT
    out[4] = sign * c.speed_x / SPEED_SCALE
    out[5] = c.speed_y / SPEED_SCALE
    out[6 + c.state] = 1.0
    at = 6 + STATES
    out[at + c.action] = 1.0
    at += MOTIONS
    out[at] = min(c.remaining_frame / MOTION_SCALE, 2.0)
    out[at + 1] = float(c.control)
    out[at + 2] = float(c.front != mirror)  # facing right, as seen by the seat
    attack = c.attack_data
    live = not attack.empty_flag and attack.hit_damage > 0
    out[at + 3] = float(live)
    out[at + 4] = attack.hit_damage / DAMAGE_SCALE if live else 0.0


def _projectiles(out: np.ndarray, group: list, me, mirror: bool) -> None:
    """The nearest projectiles of one side, relative to the seat's fighter."""
    mine = _x(me.x, mirror)
    placed = []
    for p in group:
        area = p.current_hit_area
        x = _x((area.left + area.right) / 2.0, mirror)
        placed.append((abs(x - mine), x, (area.top + area.bottom) / 2.0, p.hit_damage))
    for i, (_, x, y, damage) in enumerate(sorted(placed)[:PROJECTILES]):
        out[i * PROJECTILE_SIZE:(i + 1) * PROJECTILE_SIZE] = (
            1.0, x - mine, y / STAGE_HEIGHT, damage / DAMAGE_SCALE)
