"""The recurrent actor-critic: each tower is encoder -> LSTM -> head, with its own memory.

Actor and critic still share no parameters (as in :class:`~msagent.policy.networks.ActorCritic`),
so each has its own LSTM. The acting state of one env is the flat ``[4 * lstm]`` vector
``(h_actor, c_actor, h_critic, c_critic)``: what env workers carry between steps, what inference
requests carry, and what a Fragment stores at its first step so that the learner replays the
sequence exactly as it was acted.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from msagent.policy.networks import (
    CNN, LSTMCore, MLP, NetworkConfig, TwoTowers, activation, init_layer,
)

State = tuple[Tensor, Tensor]
"""``(h, c)`` of one LSTM, each ``[N, hidden]``."""


def _encoder(obs_shape: Sequence[int], config: NetworkConfig) -> tuple[nn.Module, int]:
    """The feature encoder before the LSTM, and its output width."""
    if len(obs_shape) == 3:
        return CNN(obs_shape, config.cnn_features, kind=config.cnn), config.cnn_features
    if not config.hidden:
        return nn.Identity(), int(obs_shape[0])
    widths = config.hidden
    mlp = MLP(obs_shape[0], widths[:-1], widths[-1], config.activation, out_gain=2 ** 0.5)
    return nn.Sequential(mlp, activation(config.activation)()), widths[-1]


class RecurrentTower(nn.Module):
    """Observations -> features -> LSTM -> ``out_dim`` outputs."""

    def __init__(self, obs_shape: Sequence[int], out_dim: int, config: NetworkConfig,
                 gain: float) -> None:
        """Build encoder, core and head; the head starts at scale ``gain``."""
        super().__init__()
        self.encoder, width = _encoder(obs_shape, config)
        self.core = LSTMCore(width, config.lstm)
        self.head = init_layer(nn.Linear(config.lstm, out_dim), gain)

    def step(self, x: Tensor, state: State) -> tuple[Tensor, State]:
        """One step for a batch ``[N, ...]``: outputs ``[N, out]`` and the next state."""
        out, state = self.core(self.encoder(x).unsqueeze(1), state)
        return self.head(out.squeeze(1)), state

    def sequence(self, x: Tensor, state: State, resets: Tensor) -> Tensor:
        """Outputs ``[B, T, out]`` of sequences ``[B, T, ...]`` started from ``state``."""
        b, t = x.shape[:2]
        features = self.encoder(x.flatten(0, 1)).view(b, t, -1)
        out, _ = self.core(features, state, resets)
        return self.head(out)


class RecurrentActorCritic(TwoTowers):
    """Recurrent actor and critic towers, each with its own LSTM.

    Attributes:
        hidden: the LSTM width of each tower.
        state_size: width of the flat acting state, ``4 * hidden``.
    """

    def __init__(self, obs_shape: Sequence[int], out_dim: int, continuous: bool,
                 config: NetworkConfig) -> None:
        """Build both towers for ``obs_shape`` with ``config.lstm`` wide memories."""
        super().__init__()
        self.hidden, self.state_size = config.lstm, 4 * config.lstm
        self._build(RecurrentTower(obs_shape, out_dim, config, gain=0.01),
                    RecurrentTower(obs_shape, 1, config, gain=1.0), out_dim, continuous, config)

    def split(self, state: Tensor) -> tuple[State, State]:
        """The actor's and the critic's ``(h, c)`` of a flat ``[N, 4H]`` state."""
        ha, ca, hc, cc = state.split(self.hidden, dim=1)
        return (ha.contiguous(), ca.contiguous()), (hc.contiguous(), cc.contiguous())

    def step(self, x: Tensor, state: Tensor, values: bool = True
             ) -> tuple[Tensor, Tensor, Tensor]:
        """Actor outputs ``[N, A]``, values ``[N]`` and the next flat state of one step.

        With ``values`` False the critic is skipped: values are zeros and its state stays.
        """
        actor_state, critic_state = self.split(state)
        out, actor_state = self.actor.step(x, actor_state)
        if values:
            value, critic_state = self.critic.step(x, critic_state)
            value = value.squeeze(-1)
        else:
            value = torch.zeros(len(x))
        return out, value, torch.cat([*actor_state, *critic_state], dim=1)

    def sequence(self, x: Tensor, state: Tensor, resets: Tensor) -> tuple[Tensor, Tensor]:
        """Actor outputs ``[B, T, A]`` and values ``[B, T]`` of sequences from ``state``;
        the memory is zeroed before step t where ``resets[:, t]`` (a new episode)."""
        actor_state, critic_state = self.split(state)
        out = self.actor.sequence(x, actor_state, resets)
        values = self.critic.sequence(x, critic_state, resets).squeeze(-1)
        return out, values
