"""Policy: the acting half of an agent (act, evaluate, weights); learning lives in algorithms/.

A ``Policy`` is what env workers and inference servers hold: it maps observations to actions,
their log-probabilities and state values, and moves its parameters in and out as flat numpy
arrays (:data:`msagent.vocabulary.Weights`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from msagent.errors import ConfigError, ScriptError
from msagent.policy import operators as ops
from msagent.policy.networks import (
    ActorCritic, FusedInference, NetworkConfig, SharedActorCritic,
)
from msagent.policy.recurrent import RecurrentActorCritic
from msagent.policy.spaces import ActionSpec, ActOutput, box_shape, observation_shape
from msagent.policy.symmetry import Symmetry, checked_symmetries
from msagent.vocabulary import Weights


def _fork_seeded(seed: int | None) -> torch.Generator:
    """A private random generator, so acting does not disturb (nor depend on) global torch RNG."""
    gen = torch.Generator()
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(seed)
    return gen


class Policy:
    """Actor-critic policy for acting; algorithms train it through ``model`` and ``evaluate``.

    Attributes:
        obs_shape: shape of one observation (batches add a leading axis).
        action_spec: the action space.
        model: the underlying actor-critic module (``ActorCritic`` unless the network is
            recurrent or ``shared``).
    """

    def __init__(
        self,
        obs_shape: Sequence[int] | Any,
        action_spec: ActionSpec | Any,
        network: NetworkConfig | None = None,
        seed: int | None = None,
        symmetries: Sequence[Symmetry] = (),
    ) -> None:
        """Build the networks; ``seed`` fixes both initial weights and action sampling.

        Args:
            obs_shape: shape of one observation, or a gymnasium ``Box`` observation space.
            action_spec: an ``ActionSpec`` or a gymnasium ``Discrete``, ``MultiDiscrete`` or
                ``Box`` action space.
            network: network sizes (default ``NetworkConfig()``: 64x64 tanh).
            seed: seed of initial weights and of sampling (``None``: nondeterministic).
            symmetries: transformations under which the game is unchanged; the learner trains
                on each step once more per symmetry (see :mod:`msagent.policy.symmetry`).

        Raises:
            ScriptError: an unsupported observation or action space (see
                :func:`observation_shape` and :meth:`ActionSpec.from_space`).
            ConfigError: a symmetry that does not fit the spaces, or one on a recurrent policy.
        """
        if not isinstance(action_spec, ActionSpec):
            action_spec = ActionSpec.from_space(action_spec)
        self.network = network or NetworkConfig()
        self._input_shape: tuple[int, ...] | None = None
        if self.network.flatten:
            self._input_shape = box_shape(obs_shape)
            obs_shape = (int(np.prod(self._input_shape)),)
        self.obs_shape = observation_shape(obs_shape)
        self.action_spec = action_spec
        self._gen = _fork_seeded(seed)
        self.recurrent = self.network.lstm > 0
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self._gen.initial_seed())
            kind = (SharedActorCritic if self.network.shared  # (it refuses an LSTM)
                    else RecurrentActorCritic if self.recurrent else ActorCritic)
            self.model = kind(self.obs_shape, action_spec.size, action_spec.continuous,
                              self.network)
        self._fused = FusedInference(self.model)
        self._device = torch.device("cpu")
        if symmetries and action_spec.multi:
            raise ConfigError("symmetries are not supported with multi-discrete actions")
        self.symmetries = checked_symmetries(symmetries, self.raw_obs_shape, action_spec.size,
                                             action_spec.continuous, self.recurrent)

    @property
    def device(self) -> torch.device:
        """Where the parameters are (the CPU unless :meth:`to` moved them)."""
        return self._device

    def to(self, device: torch.device | str) -> Policy:
        """Move the parameters (a learner's policy, to train on a GPU); acting still takes and
        returns numpy arrays on the CPU."""
        self.model.to(device)
        self._device = next(self.model.parameters()).device
        self._fused = FusedInference(self.model)
        return self

    @property
    def raw_obs_shape(self) -> tuple[int, ...]:
        """The shape of one observation as the env gives it (before any flattening)."""
        return tuple(self._input_shape or self.obs_shape)

    @property
    def state_size(self) -> int:
        """Width of the recurrent state an env carries between steps (0: feed-forward)."""
        return self.model.state_size if self.recurrent else 0

    def initial_state(self, n: int) -> np.ndarray | None:
        """The state of ``n`` fresh episodes (zeros), or None for a feed-forward policy."""
        return np.zeros((n, self.state_size), np.float32) if self.recurrent else None

    # ----------------------------------------------------------------------------- acting

    def act(
        self,
        obs: np.ndarray,
        action_mask: np.ndarray | None = None,
        deterministic: bool = False,
        values: bool = True,
        state: np.ndarray | None = None,
    ) -> ActOutput:
        """Choose actions for a batch of observations (no autograd, no gradient bookkeeping).

        Args:
            obs: observations ``[N, *obs_shape]``.
            action_mask: ``[N, A]`` booleans, true where an action is legal (discrete only;
                for multi-discrete actions the components' masks side by side, ``A =
                sum(nvec)``).
            deterministic: take the most likely action (or the mean) instead of sampling.
            values: False skips the critic (values come back as zeros): for seats whose
                experience is not trained on, such as frozen opponents.
            state: ``[N, state_size]`` recurrent states (None: fresh episodes); ignored by a
                feed-forward policy.

        Returns:
            ``ActOutput`` of numpy arrays, each with leading axis N (with the next ``state``
            when the policy is recurrent).
        """
        x = self._obs_tensor(obs)
        with torch.inference_mode():
            if self.recurrent:
                out, value, after = self.model.step(x, self._state_tensor(state, len(x)), values)
            elif values:
                out, value = self._forward_inference(x)
            else:
                out, value = self.model.actor(x), torch.zeros(len(x), device=x.device)
            if out.device.type != "cpu":  # sampling uses the CPU generator
                out, value = out.cpu(), value.cpu()
                after = after.cpu() if self.recurrent else None
            if self.action_spec.continuous:
                actions, logp = self._act_continuous(out, deterministic)
            else:
                actions, logp = self._act_discrete(out, action_mask, deterministic)
        after = after.numpy() if self.recurrent else None
        return ActOutput(actions.numpy(), logp.numpy(), value.numpy(), after)

    def _state_tensor(self, state: np.ndarray | Tensor | None, n: int) -> Tensor:
        """``[n, state_size]`` float32 states (zeros for None), checked against the policy.

        Raises:
            ScriptError: the states have the wrong shape, naming the expected one.
        """
        if state is None:
            return torch.zeros(n, self.state_size, device=self.device)
        state = torch.as_tensor(state, dtype=torch.float32, device=self.device)
        if tuple(state.shape) != (n, self.state_size):
            raise ScriptError(f"recurrent state batch has shape {tuple(state.shape)}; the "
                              f"policy expects [N, state_size] = [{n}, {self.state_size}]")
        return state

    def action_probs(self, obs: np.ndarray, action_mask: np.ndarray | None = None) -> np.ndarray:
        """``[N, A]`` probabilities of each discrete action (zero where masked): the policy as a
        table, e.g. to measure its exploitability exactly."""
        if self.action_spec.continuous or self.action_spec.multi or self.recurrent:
            raise ValueError("action_probs needs a feed-forward policy over Discrete actions "
                             "(a recurrent policy's probabilities depend on its history)")
        with torch.inference_mode():
            logits = self.model.actor(self._obs_tensor(obs))
            if action_mask is not None:
                mask = torch.from_numpy(np.asarray(action_mask, dtype=bool)).to(logits.device)
                logits = ops.masked_logits(logits, mask)
            return torch.softmax(logits.double(), dim=-1).cpu().numpy()

    def _forward_inference(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """Actor outputs and values, through the fused MLP when the towers allow it."""
        if not self._fused.supported:
            return self.model(x)
        out = self._fused(x)
        return out[:, :-1], out[:, -1]

    def invalidate_cache(self) -> None:
        """Tell acting that parameters changed behind autograd's back (e.g. fused optimizers)."""
        self._fused.invalidate()

    def _act_discrete(
        self, logits: Tensor, mask: np.ndarray | None, deterministic: bool
    ) -> tuple[Tensor, Tensor]:
        """Pick discrete actions from (masked) logits and return them with their log-probs."""
        if mask is not None:
            logits = ops.masked_logits(logits, torch.from_numpy(np.asarray(mask, dtype=bool)))
        nvec = self.action_spec.nvec
        if nvec is not None:
            actions = (ops.multi_categorical_mode(logits, nvec) if deterministic
                       else ops.multi_categorical_sample(logits, nvec, self._gen))
            return actions, ops.multi_categorical_log_prob(logits, actions, nvec)
        if deterministic:
            actions = logits.argmax(-1)
        else:
            actions = ops.categorical_sample(logits, self._gen)
        return actions, ops.categorical_log_prob(logits, actions)

    def _act_continuous(self, mean: Tensor, deterministic: bool) -> tuple[Tensor, Tensor]:
        """Sample (or take the mean of) the diagonal Gaussian and return log-densities."""
        log_std = self.model.log_std.to(mean.device).expand_as(mean)
        actions = mean if deterministic else ops.gaussian_sample(mean, log_std, self._gen)
        return actions, ops.gaussian_log_prob(mean, log_std, actions)

    def clip_actions(self, actions: np.ndarray) -> np.ndarray:
        """Clip raw continuous actions into the action bounds before sending them to the env."""
        spec = self.action_spec
        if not spec.continuous or spec.low is None or spec.high is None:
            return actions
        return np.clip(actions, np.asarray(spec.low), np.asarray(spec.high)).astype(actions.dtype)

    def _obs_tensor(self, obs: np.ndarray | Tensor) -> Tensor:
        """View observations as a tensor without copying when they are already float32/uint8."""
        device = self._device
        if isinstance(obs, Tensor):
            return self._flat(obs).to(device, non_blocking=True)
        obs = np.asarray(obs)
        if obs.dtype != np.float32 and obs.dtype != np.uint8:
            obs = obs.astype(np.float32)
        obs = self._flat(obs)
        if obs.shape[1:] != self.obs_shape:
            raise ScriptError(self._shape_message(obs.shape))
        tensor = torch.from_numpy(np.ascontiguousarray(obs))
        return tensor if device.type == "cpu" else tensor.to(device, non_blocking=True)

    def _flat(self, obs):
        """``[N, *space shape]`` as ``[N, prod]`` when the network flattens observations."""
        if self._input_shape is not None and tuple(obs.shape[1:]) == self._input_shape:
            return obs.reshape(obs.shape[0], -1)
        return obs

    def _shape_message(self, shape: tuple[int, ...]) -> str:
        """Say which batch shape was given and which one the policy was built for."""
        expected = ", ".join(["N", *map(str, self.obs_shape)])
        hint = "; add the batch axis: obs[None]" if shape == self.obs_shape else ""
        return (f"observation batch has shape {shape}; the policy expects "
                f"[N, *obs_shape] = [{expected}]{hint}")

    # ---------------------------------------------------------------------------- learning

    def evaluate(
        self,
        obs: np.ndarray | Tensor,
        actions: np.ndarray | Tensor,
        mask: np.ndarray | Tensor | None = None,
        state: Tensor | None = None,
        resets: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Differentiable ``(logp, entropy, values)`` of given actions, for the learner's loss.

        A recurrent policy takes sequences: ``obs`` ``[B, T, ...]``, ``actions`` and ``mask``
        ``[B, T, ...]``, the acting ``state`` at each sequence's first step ``[B, state_size]``
        and ``resets`` ``[B, T]`` (true where an episode starts); it returns ``[B * T]`` rows.
        """
        if self.recurrent:
            out, values, actions, mask = self._replay(obs, actions, mask, state, resets)
        else:
            out, values = self.model(self._obs_tensor(obs))
        actions = torch.as_tensor(actions, device=out.device)
        mask = None if mask is None else torch.as_tensor(mask, device=out.device)
        if self.action_spec.continuous:
            log_std = self.model.log_std.expand_as(out)
            logp = ops.gaussian_log_prob(out, log_std, actions)
            return logp, ops.gaussian_entropy(log_std), values
        logits = ops.masked_logits(out, mask)
        nvec = self.action_spec.nvec
        if nvec is not None:
            return (ops.multi_categorical_log_prob(logits, actions, nvec),
                    ops.multi_categorical_entropy(logits, nvec), values)
        return ops.categorical_log_prob(logits, actions), ops.categorical_entropy(logits), values

    def _replay(self, obs, actions, mask, state, resets) -> tuple[Tensor, Tensor, Tensor, Any]:
        """Outputs and values of recorded sequences, and actions and masks, all as ``[B*T]``."""
        obs = torch.as_tensor(obs) if not isinstance(obs, np.ndarray) else obs
        b, t = obs.shape[:2]
        x = self._obs_tensor(obs.reshape(b * t, *obs.shape[2:])).view(b, t, *self.obs_shape)
        resets = (torch.zeros(b, t, dtype=torch.bool) if resets is None
                  else torch.as_tensor(resets)).to(x.device)
        out, values = self.model.sequence(x, self._state_tensor(state, b), resets)
        flat = None if mask is None else torch.as_tensor(mask).flatten(0, 1)
        return out.flatten(0, 1), values.flatten(0, 1), torch.as_tensor(actions).flatten(0, 1), flat

    def policy_parameters(self) -> list[torch.nn.Parameter]:
        """Parameters of the actor (what the policy loss may move)."""
        return self.model.policy_parameters()

    def value_parameters(self) -> list[torch.nn.Parameter]:
        """Parameters of the critic (what the value loss may move)."""
        return self.model.value_parameters()

    # ----------------------------------------------------------------------------- weights

    def get_weights(self) -> Weights:
        """Copy parameters out as contiguous numpy arrays by flat name (safetensors-ready)."""
        return {
            name: np.ascontiguousarray(t.detach().cpu().numpy()).copy()
            for name, t in self.model.state_dict().items()
        }

    def set_weights(self, weights: Weights) -> None:
        """Overwrite the parameters in place (optimizers holding them stay valid)."""
        state = self.model.state_dict()
        missing, unknown = set(state) - set(weights), set(weights) - set(state)
        if missing or unknown:
            raise ConfigError(
                f"weights mismatch: missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        with torch.no_grad():
            for name, target in state.items():
                source = torch.from_numpy(np.require(weights[name], requirements=["C", "W"]))
                if source.shape != target.shape:
                    raise ConfigError(
                        f"{name}: shape {tuple(source.shape)} != {tuple(target.shape)}"
                    )
                target.copy_(source)
