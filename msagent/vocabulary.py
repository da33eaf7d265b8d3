"""The nouns of msagent, in one place.

How they meet, as a calling loop (the ``train`` command wires exactly this)::

    env_worker:   obs = envs.reset()
                  loop: actions = InferenceClient.predict(PredictRequest)  # or a local policy
                        obs, rewards, ... = envs.step(actions)
                        every T steps: BufferClient.insert(table, [Fragment, ...])
    learner:      loop: batch = BufferClient.sample(table, n)  # a list of Fragment
                        stats = algorithm.update(batch)     # GAE / PPO in the learner
                        publish("params/<policy>", weights) # actors subscribe to the topic
                        every k updates: PoolClient.push(policy_id, weights, metadata) -> ModelKey
    league:       env workers ask LeagueClient.next_matches and LeagueClient.report the games;
                  learners ask LeagueClient.on_update when to snapshot (and reset)

Nothing here imports Ray; these are plain values that cross service boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

PolicyId = str
"""Name of a trainable or frozen policy, e.g. ``"main"`` or ``"main_exploiter_0"``."""

Version = int
"""A version number that only grows: of a policy snapshot or of a published topic value."""

ServiceName = str
"""Name under which a service's instances register (defaults to the class name)."""

Topic = str
"""Name of a publish/subscribe channel, e.g. ``"params/main"``."""

Weights = dict[str, "np.ndarray"]
"""A policy's parameters as a flat name -> array mapping (what safetensors stores)."""


@dataclass(frozen=True, order=True)
class ModelKey:
    """Names one stored snapshot of one policy: (policy_id, version)."""

    policy_id: PolicyId
    version: Version

    def __str__(self) -> str:
        """Render as ``policy_id:version`` (used as a storage key)."""
        return f"{self.policy_id}:{self.version}"


class Columns:
    """Shared names of batch keys, so that workers, buffer and learner agree (RLlib's columns)."""

    OBS = "obs"
    ACTIONS = "actions"
    LOGP = "logp"
    VALUES = "values"
    REWARDS = "rewards"
    TERMINATED = "terminated"
    TRUNCATED = "truncated"
    FINAL_VALUES = "final_values"
    ACTION_MASK = "action_mask"
    ADVANTAGES = "advantages"
    RETURNS = "returns"
    INITIAL_STATE = "initial_state"
    RESETS = "resets"


@dataclass
class Fragment:
    """A fixed-length piece of one environment's trajectory, as it was acted.

    Arrays have a leading time axis of length T. ``final_values[t]`` is V(s_{t+1}) of the
    observation the env returned when it was *truncated* after step t (0 elsewhere), so that GAE
    can bootstrap through time limits; ``bootstrap_value`` is V of the observation after the
    last step (ignored when the last step terminated).
    """

    obs: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_values: np.ndarray
    bootstrap_value: float
    policy: ModelKey
    action_mask: np.ndarray | None = None
    initial_state: np.ndarray | None = None
    """A recurrent policy's acting state before the first step (``[state_size]``), which the
    learner replays the fragment from; None for a feed-forward policy."""
    latest_version: int | None = None
    """The newest policy version that acted a step of the fragment (``policy`` is the
    oldest). A learner measures a fragment's staleness from it: a fragment takes as long to
    fill as its seat takes to make T decisions, and measured from its first step the second
    seat of a turn-based game (fewer decisions per game) was older, and dropped twice as
    often. None: ``policy.version``."""

    def newest_version(self) -> int:
        """The version a learner measures the fragment's staleness from."""
        return self.policy.version if self.latest_version is None else self.latest_version

    def __len__(self) -> int:
        """Number of steps in the fragment."""
        return int(self.rewards.shape[0])


AgentId = str
"""Name of a seat of a game, e.g. ``"player_0"``; seats are also numbered 0..S-1 in order."""

PLAYER, SNAPSHOT, BOT = "player", "snapshot", "bot"
"""The kinds of :class:`PolicyRef`."""

LEAGUE_MIXTURE = "league"
"""The league's answer: its snapshots mixed by a meta-solver (``[league.mixture]``); the name
its measures go by beside the players'."""

BUILTIN_RANDOM = "msagent:random"
"""A ``[league.bots]`` entry that names the built-in random bot (uniformly random legal
actions; ``msagent.envs.bots.RandomBot``) instead of a bot script."""

DEVICE_PATTERN = r"^(cpu|auto|cuda(:\d+)?)$"
"""What ``services.learner.device`` may say: where a learner trains."""


@dataclass(frozen=True, order=True)
class PolicyRef:
    """Who plays a seat: a trainable player (its newest parameters), a frozen snapshot from
    the model pool (a ModelKey), or a scripted bot.

    ``str(ref)`` is the participant id the payoff table and the ratings use: ``"main"``,
    ``"main:12"`` or ``"bot:random"``.
    """

    kind: str
    name: str
    version: Version = 0

    @classmethod
    def player(cls, player_id: PolicyId) -> PolicyRef:
        """The newest parameters of trainable player ``player_id``."""
        return cls(PLAYER, player_id)

    @classmethod
    def snapshot(cls, key: ModelKey) -> PolicyRef:
        """The frozen snapshot ``key``."""
        return cls(SNAPSHOT, key.policy_id, int(key.version))

    @classmethod
    def bot(cls, name: str) -> PolicyRef:
        """The scripted bot declared under ``name``."""
        return cls(BOT, name)

    @classmethod
    def parse(cls, text: str) -> PolicyRef:
        """The ref whose ``str`` is ``text`` (the inverse of ``__str__``)."""
        if text.startswith("bot:"):
            return cls.bot(text[4:])
        name, sep, version = text.rpartition(":")
        if sep and version.isdigit():
            return cls.snapshot(ModelKey(name, int(version)))
        return cls.player(text)

    @property
    def key(self) -> ModelKey:
        """The ModelKey of a snapshot ref."""
        if self.kind != SNAPSHOT:
            raise ValueError(f"{self} is a {self.kind}, not a snapshot")
        return ModelKey(self.name, self.version)

    def __str__(self) -> str:
        """The participant id: ``name``, ``name:version`` or ``bot:name``."""
        if self.kind == SNAPSHOT:
            return f"{self.name}:{self.version}"
        return f"bot:{self.name}" if self.kind == BOT else self.name


@dataclass(frozen=True)
class Match:
    """One game's seating: ``seats[i]`` plays seat ``i``; ``learner_seat`` is the seat of the
    trainable player the match was made for (the only seat whose experience is trained on);
    ``fixed_seats``: the seating must not be swapped (a player that only plays one seat, or
    whose seat the league drew with seat weights)."""

    seats: tuple[PolicyRef, ...]
    learner_seat: int = 0
    fixed_seats: bool = False

    @property
    def learner(self) -> PolicyRef:
        """The ref in the learner seat."""
        return self.seats[self.learner_seat]

    def opponents(self) -> tuple[PolicyRef, ...]:
        """Every other seat's ref, in seat order."""
        return tuple(r for i, r in enumerate(self.seats) if i != self.learner_seat)


@dataclass
class EpisodeResult:
    """What an env worker reports when an episode ends (for progress and the league).

    ``policy`` is the version of the learner-seat policy at the episode's end; ``outcome`` is
    +1 (win), 0 (draw) or -1 (loss) from the learner seat (None for one-seat games);
    ``seat_returns`` holds every seat's return in seat order.
    """

    episode_return: float
    length: int
    policy: ModelKey
    opponent: ModelKey | None = None
    outcome: float | None = None
    info: dict[str, Any] = field(default_factory=dict)
    match: Match | None = None
    seat_returns: tuple[float, ...] = ()


@dataclass
class PredictRequest:
    """One env worker's observations for one policy.

    ``version=None`` asks for the trainable policy's newest parameters, at least
    ``min_version``; a version number asks for that frozen snapshot from the model pool.
    ``action_mask`` (``[N, A]`` bools) restricts discrete actions to the legal ones.
    """

    obs: np.ndarray
    policy_id: str
    min_version: int = 0
    version: int | None = None
    action_mask: np.ndarray | None = None
    values: bool = True
    """False: the state values are not needed (a frozen opponent's seat): the critic is skipped."""
    state: np.ndarray | None = None
    """``[N, state_size]`` recurrent states of the rows (None: fresh episodes, or feed-forward)."""
    greedy: bool = False
    """Take the most likely legal action instead of sampling."""


@dataclass
class PolicyScripts:
    """Where the user's env and agent live, to build policies of the right shape."""

    env_script: str
    agent_script: str
    env_params: dict[str, Any]
    seed: int = 0
    agents: dict[str, str] = field(default_factory=dict)
    """League players whose own agent script (network) differs from ``agent_script``."""

    def agent_for(self, policy_id: str) -> str:
        """The agent script whose network ``policy_id`` (a player, or its snapshots) has."""
        return self.agents.get(policy_id, self.agent_script)
