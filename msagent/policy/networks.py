"""Neural network building blocks and the actor-critic module that a Policy wraps.

By default actor and critic share no parameters, so the policy loss never moves the value function
and the value loss never moves the policy (tested in ``tests/policy/test_policy.py``).
``NetworkConfig(shared=True)`` gives image policies one CNN under both heads instead
(:class:`SharedActorCritic`), as the Atari PPO baselines build them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from msagent.errors import ConfigError, ScriptError

_ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}
SMALL_IMAGE = 36
"""With ``cnn="auto"``, images smaller than this on a side use the grid CNN, larger ones
Nature's."""
CNN_KINDS = ("auto", "nature", "strided", "grid")
"""Convolution stacks by name (see :func:`conv_layout`)."""


@dataclass(frozen=True)
class NetworkConfig:
    """Sizes of the actor-critic networks.

    Attributes:
        hidden: widths of the hidden layers of each MLP (actor and critic alike).
        activation: ``"tanh"`` or ``"relu"``.
        cnn_features: width of the CNN's output features (image observations only).
        init_log_std: initial log standard deviation of continuous actions.
        flatten: feed any Box observation to the MLPs as one flat vector (e.g. small board
            planes, where an MLP is far cheaper on a CPU than the CNN).
        lstm: width of an LSTM core after each tower's encoder (0: no memory). A recurrent
            policy carries ``(h, c)`` per env from step to step; see ``RecurrentActorCritic``.
        shared: one CNN torso under both the actor and the critic head (image observations,
            feed-forward only): the value loss shapes the features the policy reads, and acting
            costs one CNN instead of two.
        cnn: the convolutions of image towers: ``"nature"`` (Nature DQN's 8x8/4, 4x4/2, 3x3/1,
            made for 84x84 frames), ``"strided"`` (four 3x3/2 convolutions of 32 channels, the
            A3C stack made for 42x42 frames), ``"grid"`` (two padded 3x3/1 convolutions, for
            board planes), or ``"auto"``: grid below 36 pixels a side, else Nature.
        actor_inputs: the actor reads only the first N features of the flat observation, the
            critic all of them (0: both read everything). The rest is information for the critic
            alone, such as an opponent's hidden cards: a lower-variance value baseline in
            training that acting never sees (feed-forward MLP policies only).
    """

    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    cnn_features: int = 256
    init_log_std: float = 0.0
    flatten: bool = False
    lstm: int = 0
    shared: bool = False
    cnn: str = "auto"
    actor_inputs: int = 0

    def __post_init__(self) -> None:
        """Refuse an unknown convolution stack by name, and an actor split where it cannot be."""
        if self.cnn not in CNN_KINDS:
            raise ConfigError(f"unknown cnn {self.cnn!r}; choose from {list(CNN_KINDS)}")
        if self.actor_inputs < 0:
            raise ConfigError(f"actor_inputs must be >= 0, got {self.actor_inputs}")
        if self.actor_inputs and (self.lstm or self.shared):
            raise ConfigError("actor_inputs needs separate feed-forward towers: it cannot be "
                              "combined with lstm or shared")


def activation(name: str) -> type[nn.Module]:
    """Look an activation class up by name, failing loudly on typos."""
    if name not in _ACTIVATIONS:
        raise ConfigError(f"unknown activation {name!r}; choose from {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]


def init_layer(layer: nn.Module, gain: float = math.sqrt(2.0)) -> nn.Module:
    """Orthogonal weights and zero biases: the initialisation PPO implementations rely on."""
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class MLP(nn.Sequential):
    """Fully connected network: ``Linear -> act`` per hidden width, then a linear output."""

    def __init__(
        self,
        in_dim: int,
        hidden: Sequence[int],
        out_dim: int,
        act: str = "tanh",
        out_gain: float = 1.0,
        reads: int = 0,
    ) -> None:
        """Build the layers with orthogonal init; ``out_gain`` scales the output layer;
        ``reads`` > 0: only the first ``reads`` of the ``in_dim`` input features are read."""
        layers: list[nn.Module] = []
        in_dim = reads or in_dim
        for width in hidden:
            layers += [init_layer(nn.Linear(in_dim, width)), activation(act)()]
            in_dim = width
        layers.append(init_layer(nn.Linear(in_dim, out_dim), out_gain))
        super().__init__(*layers)
        self.act_name = act
        self.reads = reads

    def forward(self, x: Tensor) -> Tensor:
        """The outputs, from the first ``reads`` features only when set."""
        return super().forward(x[..., : self.reads] if self.reads else x)

    def linears(self) -> list[nn.Linear]:
        """The linear layers in order (what fused inference packs)."""
        return [m for m in self if isinstance(m, nn.Linear)]


def conv_layout(kind: str, channels: int, height: int) -> list[tuple[int, int, int, int, int]]:
    """The ``(in, out, kernel, stride, padding)`` of each convolution of a named stack (an
    unknown name is a ``ConfigError``, also for a ``CNN`` built without a ``NetworkConfig``).

    Nature's stack on 42x42 frames ends on a 1x1 map of 64 numbers, too narrow a summary of a
    screen; ``strided`` keeps a 3x3 map of 32 channels there at about twice the cost.
    """
    if kind == "auto":
        kind = "nature" if height >= SMALL_IMAGE else "grid"
    if kind == "nature":
        return [(channels, 32, 8, 4, 0), (32, 64, 4, 2, 0), (64, 64, 3, 1, 0)]
    if kind == "strided":
        return [(channels, 32, 3, 2, 1)] + [(32, 32, 3, 2, 1)] * 3
    if kind == "grid":
        return [(channels, 32, 3, 1, 1), (32, 64, 3, 1, 1)]
    raise ConfigError(f"unknown cnn {kind!r}; choose from {list(CNN_KINDS)}")


def _conv_stack(kind: str, channels: int, height: int) -> nn.Sequential:
    """ReLU convolutions of the named layout, flattened."""
    layers: list[nn.Module] = []
    for c_in, c_out, kernel, stride, pad in conv_layout(kind, channels, height):
        layers += [init_layer(nn.Conv2d(c_in, c_out, kernel, stride, pad)), nn.ReLU()]
    return nn.Sequential(*layers, nn.Flatten())


class CNN(nn.Module):
    """Convolutional torso for image observations ``[N, H, W, C]`` (or ``[N, C, H, W]``).

    ``uint8`` inputs are scaled to ``[0, 1]``; the output is ``[N, features]`` after a ReLU.
    """

    def __init__(self, obs_shape: Sequence[int], features: int = 256,
                 channels_last: bool = True, kind: str = "auto") -> None:
        """Build convolutions for ``obs_shape`` and a linear layer sized by a dry run."""
        super().__init__()
        if len(obs_shape) != 3:
            raise ScriptError(f"CNN needs a 3-d observation shape [H, W, C] (or [C, H, W]), "
                              f"got {tuple(obs_shape)}")
        self.channels_last = channels_last
        h, _, c = obs_shape if channels_last else (obs_shape[1], obs_shape[2], obs_shape[0])
        self.convs = _conv_stack(kind, c, h)
        with torch.no_grad():
            flat = self.convs(self._to_nchw(torch.zeros(1, *obs_shape))).shape[1]
        self.out = nn.Sequential(init_layer(nn.Linear(flat, features)), nn.ReLU())

    def _to_nchw(self, x: Tensor) -> Tensor:
        """Convert to float NCHW, scaling bytes to [0, 1]."""
        if x.dtype == torch.uint8:
            x = x.float() / 255.0
        return x.permute(0, 3, 1, 2) if self.channels_last else x

    def forward(self, x: Tensor) -> Tensor:
        """Encode a batch of images into feature vectors."""
        return self.out(self.convs(self._to_nchw(x)))


class LSTMCore(nn.Module):
    """Single-layer LSTM over ``[B, T, F]`` sequences whose state is zeroed at episode starts."""

    def __init__(self, in_dim: int, hidden: int) -> None:
        """Build the LSTM cell stack (batch-first)."""
        super().__init__()
        self.hidden = hidden
        self.lstm = nn.LSTM(in_dim, hidden, batch_first=True)

    def initial_state(self, batch: int) -> tuple[Tensor, Tensor]:
        """Zero ``(h, c)`` for ``batch`` sequences, each ``[B, hidden]``."""
        zeros = torch.zeros(batch, self.hidden)
        return zeros, zeros.clone()

    def forward(
        self,
        x: Tensor,
        state: tuple[Tensor, Tensor],
        resets: Tensor | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """Run the sequence; where ``resets[b, t]`` is true the state is zeroed before step t."""
        if resets is None or not bool(resets.any()):
            out, (h, c) = self.lstm(x, (state[0].unsqueeze(0), state[1].unsqueeze(0)))
            return out, (h.squeeze(0), c.squeeze(0))
        outs = []
        h, c = state
        for t in range(x.shape[1]):
            keep = (~resets[:, t].bool()).to(x.dtype).unsqueeze(1)
            out, (h, c) = self.lstm(x[:, t : t + 1], ((h * keep)[None], (c * keep)[None]))
            h, c = h.squeeze(0), c.squeeze(0)
            outs.append(out)
        return torch.cat(outs, dim=1), (h, c)


def _tower(obs_shape: Sequence[int], out_dim: int, config: NetworkConfig, gain: float) -> nn.Module:
    """One independent network from observations to ``out_dim`` outputs (MLP or CNN + MLP)."""
    if len(obs_shape) == 1:
        return MLP(obs_shape[0], config.hidden, out_dim, config.activation, gain)
    cnn = CNN(obs_shape, config.cnn_features, kind=config.cnn)
    return nn.Sequential(cnn, MLP(config.cnn_features, (), out_dim, config.activation, gain))


class TwoTowers(nn.Module):
    """What every actor-critic shares: an actor and a critic with no parameter in common, and
    ``log_std`` (continuous actions) on the actor's side.

    Attributes:
        actor: maps observations to logits (discrete) or action means (continuous).
        critic: maps observations to state values.
        log_std: state-independent log standard deviation, or ``None`` for discrete actions.
    """

    def _build(self, actor: nn.Module, critic: nn.Module, out_dim: int, continuous: bool,
               config: NetworkConfig) -> None:
        """Hold both towers and, for continuous actions, the log standard deviations."""
        self.actor, self.critic = actor, critic
        self.log_std = (
            nn.Parameter(torch.full((out_dim,), config.init_log_std)) if continuous else None
        )

    def policy_parameters(self) -> list[nn.Parameter]:
        """Parameters that only the policy loss should move."""
        extra = [self.log_std] if self.log_std is not None else []
        return list(self.actor.parameters()) + extra

    def value_parameters(self) -> list[nn.Parameter]:
        """Parameters that only the value loss should move."""
        return list(self.critic.parameters())


class ActorCritic(TwoTowers):
    """Separate feed-forward actor and critic towers (MLP, or CNN + linear for images)."""

    def __init__(
        self,
        obs_shape: Sequence[int],
        out_dim: int,
        continuous: bool = False,
        config: NetworkConfig | None = None,
    ) -> None:
        """Build both towers for ``obs_shape``; the actor's last layer starts near zero."""
        super().__init__()
        config = config or NetworkConfig()
        actor = (_actor_part(obs_shape, out_dim, config) if config.actor_inputs
                 else _tower(obs_shape, out_dim, config, gain=0.01))
        self._build(actor, _tower(obs_shape, 1, config, gain=1.0), out_dim, continuous, config)

    def forward(self, obs: Tensor) -> tuple[Tensor, Tensor]:
        """Actor outputs ``[N, out_dim]`` and values ``[N]``."""
        return self.actor(obs), self.critic(obs).squeeze(-1)


def _actor_part(obs_shape: Sequence[int], out_dim: int, config: NetworkConfig) -> MLP:
    """The actor MLP over the first ``config.actor_inputs`` features of a flat observation."""
    if len(obs_shape) != 1 or not 0 < config.actor_inputs < obs_shape[0]:
        raise ConfigError(f"actor_inputs = {config.actor_inputs} needs a flat observation of "
                          f"more features, got shape {tuple(obs_shape)} (flatten = true "
                          "flattens a Box observation)")
    return MLP(obs_shape[0], config.hidden, out_dim, config.activation, 0.01,
               reads=config.actor_inputs)


def _pack(actor: nn.Linear, critic: nn.Linear, first: bool) -> tuple[Tensor, Tensor]:
    """One fused layer: stacked weights for the shared input (an actor reading fewer inputs
    gets zero weights for the others), block-diagonal afterwards."""
    if first:
        unread = critic.weight.shape[1] - actor.weight.shape[1]
        weight = torch.cat([nn.functional.pad(actor.weight, (0, unread)), critic.weight], dim=0)
    else:
        weight = torch.block_diag(actor.weight, critic.weight)
    return weight.detach().t().contiguous(), torch.cat([actor.bias, critic.bias]).detach()


class FusedInference:
    """Actor and critic MLPs packed into one block-diagonal MLP, for fast gradient-free acting.

    The packed copy is rebuilt when any parameter's version counter or storage changes, which
    catches ``copy_``, ``load_state_dict`` and the default (for-loop/foreach) optimizers. Fused
    optimizers (``torch.optim.Adam(fused=True)``) modify parameters without bumping versions:
    call :meth:`invalidate` after such steps.
    """

    def __init__(self, model: ActorCritic) -> None:
        """Remember the model; packing happens lazily on the first call."""
        actor, critic = model.actor, model.critic
        self.supported = (
            isinstance(actor, MLP)
            and isinstance(critic, MLP)
            and len(actor.linears()) == len(critic.linears())
            and actor.act_name == critic.act_name
        )
        self._model = model
        self._params = list(model.parameters())
        self._layers: list[tuple[Tensor, Tensor]] = []
        self._signature: tuple[int, ...] = ()

    def invalidate(self) -> None:
        """Force a repack on the next call."""
        self._signature = ()

    def _current_signature(self) -> tuple[int, ...]:
        """Version counters and storage addresses of all parameters."""
        return tuple([p._version for p in self._params] + [p.data_ptr() for p in self._params])

    def _repack(self) -> None:
        """Pack the current actor and critic weights into fused layers."""
        pairs = zip(self._model.actor.linears(), self._model.critic.linears(), strict=True)
        self._layers = [_pack(a, c, i == 0) for i, (a, c) in enumerate(pairs)]

    def __call__(self, x: Tensor) -> Tensor:
        """Concatenated ``[actor outputs, value]``, shaped ``[N, out_dim + 1]``."""
        signature = self._current_signature()
        if signature != self._signature:
            self._repack()
            self._signature = signature
        act = torch.tanh if self._model.actor.act_name == "tanh" else torch.relu
        h = x
        for weight, bias in self._layers[:-1]:
            h = act(torch.addmm(bias, h, weight))
        weight, bias = self._layers[-1]
        return torch.addmm(bias, h, weight)


class SharedActorCritic(TwoTowers):
    """One CNN torso under a linear actor head and a linear critic head (``shared=True``).

    The torso is trained by the policy and the value loss together. ``actor`` and ``critic``
    are views (torso then head) that are not registered as submodules, so the torso's weights
    appear once in ``state_dict``.
    """

    def __init__(
        self,
        obs_shape: Sequence[int],
        out_dim: int,
        continuous: bool = False,
        config: NetworkConfig | None = None,
    ) -> None:
        """Build the torso and both heads; the actor's head starts near zero."""
        super().__init__()
        config = config or NetworkConfig(shared=True)
        if len(obs_shape) != 3 or config.lstm:
            raise ConfigError("NetworkConfig(shared=True) needs image observations [H, W, C] "
                              f"and lstm=0; got shape {tuple(obs_shape)}, lstm={config.lstm}")
        self.torso = CNN(obs_shape, config.cnn_features, kind=config.cnn)
        self.actor_head = MLP(config.cnn_features, (), out_dim, config.activation, 0.01)
        self.critic_head = MLP(config.cnn_features, (), 1, config.activation, 1.0)
        self.log_std = (
            nn.Parameter(torch.full((out_dim,), config.init_log_std)) if continuous else None
        )
        object.__setattr__(self, "actor", nn.Sequential(self.torso, self.actor_head))
        object.__setattr__(self, "critic", nn.Sequential(self.torso, self.critic_head))

    def forward(self, obs: Tensor) -> tuple[Tensor, Tensor]:
        """Actor outputs ``[N, out_dim]`` and values ``[N]`` from one pass of the torso."""
        features = self.torso(obs)
        return self.actor_head(features), self.critic_head(features).squeeze(-1)
