"""The actions a seat chooses from, and the keys that perform each.

An action is a short sequence of frames of keys in numpad notation, facing right: ``6`` is
forward, ``4`` back, ``2`` down, ``8`` up (``1 3 7 9`` the diagonals, ``5`` no direction),
followed by buttons ``A B C`` (``"2 3 6A"``: down, down-forward, forward with A). Facing left
mirrors the directions. Ground actions are legal standing or crouching, air actions in the air;
``NEUTRAL`` (no key) always.
"""

from __future__ import annotations

import numpy as np

GROUND_ACTIONS: dict[str, str] = {
    "FORWARD_WALK": "6", "DASH": "6 5 6", "BACK_STEP": "4 5 4", "CROUCH": "2", "JUMP": "8",
    "FOR_JUMP": "9", "BACK_JUMP": "7", "STAND_GUARD": "4", "CROUCH_GUARD": "1",
    "THROW_A": "4A", "THROW_B": "4B", "STAND_A": "A", "STAND_B": "B", "CROUCH_A": "2A",
    "CROUCH_B": "2B", "STAND_FA": "6A", "STAND_FB": "6B", "CROUCH_FA": "3A", "CROUCH_FB": "3B",
    "STAND_D_DF_FA": "2 3 6A", "STAND_D_DF_FB": "2 3 6B", "STAND_F_D_DFA": "6 2 3A",
    "STAND_F_D_DFB": "6 2 3B", "STAND_D_DB_BA": "2 1 4A", "STAND_D_DB_BB": "2 1 4B",
    "STAND_D_DF_FC": "2 3 6C"}
"""Ground actions: name -> keys."""

AIR_ACTIONS: dict[str, str] = {
    "AIR_GUARD": "7", "AIR_A": "A", "AIR_B": "B", "AIR_DA": "2A", "AIR_DB": "2B",
    "AIR_FA": "9A", "AIR_FB": "9B", "AIR_UA": "8A", "AIR_UB": "8B", "AIR_D_DF_FA": "2 3 6A",
    "AIR_D_DF_FB": "2 3 6B", "AIR_F_D_DFA": "6 2 3A", "AIR_F_D_DFB": "6 2 3B",
    "AIR_D_DB_BA": "2 1 4A", "AIR_D_DB_BB": "2 1 4B"}
"""Air actions: name -> keys."""

ACTIONS: tuple[str, ...] = ("NEUTRAL", *GROUND_ACTIONS, *AIR_ACTIONS)
"""Every action, by index (the Discrete action space)."""

KEYS: dict[str, str] = {"NEUTRAL": "5", **GROUND_ACTIONS, **AIR_ACTIONS}
"""Action name -> its keys."""

HELD = frozenset({"FORWARD_WALK", "CROUCH", "STAND_GUARD", "CROUCH_GUARD"})
"""Actions whose key is held until the seat's next decision (walking, guarding)."""

DIRECTIONS = {"1": "DL", "2": "D", "3": "DR", "4": "L", "5": "", "6": "R", "7": "UL", "8": "U",
              "9": "UR"}
"""Numpad digit -> the direction keys it holds, facing right."""

MIRROR = {"L": "R", "R": "L"}
"""Left and right swapped (facing left)."""

GROUND_MASK = np.array([a == "NEUTRAL" or a in GROUND_ACTIONS for a in ACTIONS])
"""Legal actions on the ground (standing, crouching)."""

AIR_MASK = np.array([a == "NEUTRAL" or a in AIR_ACTIONS for a in ACTIONS])
"""Legal actions in the air."""


def key_frames(action: int, facing_right: bool) -> list[frozenset[str]]:
    """The keys of each frame of ``action`` (an index into :data:`ACTIONS`)."""
    frames = []
    for token in KEYS[ACTIONS[action]].split():
        digit = token[0] if token[0].isdigit() else "5"
        keys = set(DIRECTIONS[digit]) | set(token.lstrip("0123456789"))
        if not facing_right:
            keys = {MIRROR.get(k, k) for k in keys}
        frames.append(frozenset(keys))
    return frames


def held(action: int) -> bool:
    """Whether ``action``'s key stays held until the next decision."""
    return ACTIONS[action] in HELD


def legal_mask(in_air: bool) -> np.ndarray:
    """The actions legal in the air (``in_air``) or on the ground (a copy)."""
    return (AIR_MASK if in_air else GROUND_MASK).copy()
