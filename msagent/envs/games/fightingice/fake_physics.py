"""The fake server's fight: two fighters on a line, a few attacks, deterministic.

Not DareFightingICE's rules, only its shape: HP, energy, positions, speeds, states, motions
that take control away, a projectile, guarding, rounds that end at 0 HP or out of time, and
the same frame-data messages (``GrpcFrameData``) the game sends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from msagent.envs.games.fightingice.protocol import enum_pb2, message_pb2

STAGE_WIDTH, GROUND_Y, JUMP_FRAMES = 960, 537, 24
"""Stage width, feet height on the ground, frames of a jump."""

STAND, CROUCH, AIR = enum_pb2.STAND_STATE, enum_pb2.CROUCH_STATE, enum_pb2.AIR_STATE


@dataclass(frozen=True)
class Move:
    """An attack: frames before it hits, its reach, damage, energy cost, total frames."""

    action: int
    startup: int
    reach: int
    damage: int
    cost: int
    frames: int
    low: bool = False
    projectile: bool = False


MOVES = {
    "A": Move(enum_pb2.STAND_A, 3, 70, 5, 0, 12),
    "B": Move(enum_pb2.STAND_B, 6, 95, 10, 0, 22),
    "DA": Move(enum_pb2.CROUCH_A, 3, 75, 5, 0, 12, low=True),
    "DB": Move(enum_pb2.CROUCH_B, 6, 110, 9, 0, 24, low=True),
    "FA": Move(enum_pb2.STAND_FA, 5, 90, 8, 0, 18),
    "FB": Move(enum_pb2.STAND_FB, 9, 120, 15, 0, 34),
    "C": Move(enum_pb2.STAND_D_DF_FC, 8, 0, 20, 50, 30, projectile=True),
    "AIR": Move(enum_pb2.AIR_B, 4, 90, 8, 0, 14),
}
"""Keys (direction relative to facing, then button) -> the attack they start."""


@dataclass
class Fighter:
    """One fighter's state."""

    p1: bool
    hp: int
    x: int
    energy: int = 0
    y: int = GROUND_Y
    speed_x: int = 0
    speed_y: int = 0
    state: int = STAND
    action: int = enum_pb2.STAND
    motion: Move | None = None
    motion_frame: int = 0
    busy: int = 0
    air: int = 0
    guarding: bool = False
    front: bool = True


@dataclass
class Projectile:
    """A flying projectile."""

    owner_p1: bool
    x: int
    speed: int
    damage: int


@dataclass
class Fight:
    """One round between two fighters."""

    hp: int
    fighters: list[Fighter] = field(default_factory=list)
    projectiles: list[Projectile] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.fighters = [Fighter(True, self.hp, 240), Fighter(False, self.hp, 720)]
        self._face()

    def over(self) -> bool:
        """A fighter is out of HP."""
        return any(f.hp <= 0 for f in self.fighters)

    def step(self, keys: tuple[message_pb2.GrpcKey, message_pb2.GrpcKey]) -> None:
        """One frame: inputs, motion, hits, projectiles."""
        for fighter, key in zip(self.fighters, keys, strict=True):
            self._input(fighter, key)
        for index, fighter in enumerate(self.fighters):
            self._move(fighter, self.fighters[1 - index])
        self._fly()
        self._face()

    def _face(self) -> None:
        """Fighters face each other."""
        a, b = self.fighters
        a.front, b.front = a.x <= b.x, b.x < a.x

    def _input(self, f: Fighter, key: message_pb2.GrpcKey) -> None:
        """Start what the keys ask for, if the fighter has control."""
        f.guarding = False
        if f.busy > 0:
            return
        forward = key.R if f.front else key.L
        back = key.L if f.front else key.R
        button = "A" if key.A else "B" if key.B else "C" if key.C else ""
        if f.air:
            if button:
                self._start(f, MOVES["AIR"])
            return
        f.speed_x, f.state, f.action = 0, STAND, enum_pb2.STAND
        if button:
            name = ("D" if key.D else "F" if forward else "") + button
            move = MOVES.get(name if button != "C" else "C")
            if move is not None and f.energy >= move.cost:
                f.energy -= move.cost
                self._start(f, move)
        elif key.U:
            f.air, f.state, f.action = JUMP_FRAMES, AIR, enum_pb2.JUMP
            f.speed_x = (4 if forward else -4 if back else 0) * (1 if f.front else -1)
        elif key.D:
            f.state, f.action, f.guarding = CROUCH, enum_pb2.CROUCH, back
        elif forward or back:
            f.guarding = back
            f.action = enum_pb2.FORWARD_WALK if forward else enum_pb2.STAND_GUARD
            f.speed_x = (5 if forward else -3) * (1 if f.front else -1)

    def _start(self, f: Fighter, move: Move) -> None:
        """Begin an attack motion (control comes back when it is over)."""
        f.motion, f.motion_frame, f.busy, f.action = move, 0, move.frames, move.action
        f.speed_x = 0 if not f.air else f.speed_x

    def _move(self, f: Fighter, other: Fighter) -> None:
        """Advance one fighter one frame; its attack may hit ``other``."""
        f.x = min(max(f.x + f.speed_x, 40), STAGE_WIDTH - 40)
        if f.air:
            f.air -= 1
            half = JUMP_FRAMES // 2
            f.speed_y = -8 if f.air >= half else 8
            f.y = GROUND_Y - 8 * (half - abs(f.air - half))
            if not f.air:
                f.y, f.speed_y, f.speed_x, f.state = GROUND_Y, 0, 0, STAND
        if f.motion is not None:
            f.motion_frame += 1
            if f.motion_frame == f.motion.startup:
                if f.motion.projectile:
                    self.projectiles.append(Projectile(f.p1, f.x, 10 if f.front else -10,
                                                       f.motion.damage))
                elif abs(f.x - other.x) <= f.motion.reach and not (f.motion.low and other.air):
                    self._hit(f, other, f.motion.damage)
        if f.busy:
            f.busy -= 1
            if not f.busy:
                f.motion = None
                f.action = enum_pb2.AIR if f.air else enum_pb2.STAND

    def _hit(self, attacker: Fighter, target: Fighter, damage: int) -> None:
        """Damage (a fifth of it through a guard) and energy for the attacker."""
        target.hp -= damage // 5 if target.guarding else damage
        attacker.energy = min(attacker.energy + damage, 300)

    def _fly(self) -> None:
        """Move projectiles; they hit the first fighter of the other side they reach."""
        kept = []
        for p in self.projectiles:
            p.x += p.speed
            target = self.fighters[1] if p.owner_p1 else self.fighters[0]
            if abs(p.x - target.x) <= 30 and not target.air:
                self._hit(self.fighters[0] if p.owner_p1 else self.fighters[1], target,
                          p.damage)
            elif 0 <= p.x <= STAGE_WIDTH:
                kept.append(p)
        self.projectiles = kept

    def frame_data(self, frame: int, round_number: int) -> message_pb2.GrpcFrameData:
        """The round's state as the game's frame-data message."""
        data = message_pb2.GrpcFrameData(current_frame_number=frame, current_round=round_number,
                                         front=[f.front for f in self.fighters])
        for f in self.fighters:
            attack = message_pb2.GrpcAttackData(player_number=f.p1, empty_flag=f.motion is None)
            if f.motion is not None:
                attack.hit_damage = f.motion.damage
            data.character_data.add(
                player_number=f.p1, hp=f.hp, energy=f.energy, x=f.x, y=f.y, left=f.x - 20,
                right=f.x + 20, top=f.y - 100, bottom=f.y + 100, speed_x=f.speed_x,
                speed_y=f.speed_y, state=f.state, action=f.action, front=f.front,
                control=f.busy == 0, remaining_frame=f.busy, attack_data=attack)
        for p in self.projectiles:
            area = message_pb2.GrpcHitArea(left=p.x - 20, right=p.x + 20, top=GROUND_Y - 40,
                                           bottom=GROUND_Y)
            data.projectile_data.add(player_number=p.owner_p1, hit_damage=p.damage,
                                     current_hit_area=area, is_projectile=True, is_live=True)
        return data
