"""Acting with a published ONNX policy in a game client: onnxruntime and numpy, no torch.

The graph (see ``msagent.exporting.onnx_export``) gives ``logits`` (Discrete; for MultiDiscrete
each component's side by side, as the graph's ``msagent.action_nvec`` metadata says) or
``mean`` and ``log_std`` (Box), and ``value``; this module samples actions from them and
computes the same log-probabilities the PyTorch policy does, so uploaded episodes carry the
behaviour policy's log-probs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime

NVEC_KEY = "msagent.action_nvec"
"""The graph's metadata entry of a multi-discrete policy (as ``onnx_export`` writes it)."""
MASKED_LOGIT = -1e9
"""Logit of an illegal action (as in ``msagent.policy.operators``)."""
_LOG_2PI = math.log(2.0 * math.pi)


class OnnxPolicy:
    """A published policy: ``act`` samples (or takes the best) actions, ``value`` estimates.

    Args:
        path_or_bytes: The ``model.onnx`` file, or its bytes.
        manifest: Its manifest (a dict, as ``manifest.json`` holds); when given, the model's
            sha256 is checked against it and Box actions can be clipped to its bounds.

    Attributes:
        obs_shape: Shape of one observation.
        obs_dtype: ``float32`` or ``uint8``: what the graph takes.
        masked: Whether the graph takes an ``action_mask``.
        continuous: Box actions (else Discrete or MultiDiscrete).
        nvec: The choices of each component of MultiDiscrete actions (None otherwise).
    """

    def __init__(self, path_or_bytes: str | os.PathLike[str] | bytes,
                 manifest: dict[str, Any] | None = None) -> None:
        data = _model_bytes(path_or_bytes)
        self.manifest = dict(manifest) if manifest is not None else None
        if self.manifest is not None:
            _check_sha(data, self.manifest)
        self.session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
        inputs = {i.name: i for i in self.session.get_inputs()}
        self.obs_shape = tuple(int(d) for d in inputs["obs"].shape[1:])
        self.obs_dtype = np.dtype(np.uint8 if inputs["obs"].type == "tensor(uint8)" else np.float32)
        self.masked = "action_mask" in inputs
        self._mask_width = int(inputs["action_mask"].shape[1]) if self.masked else 0
        self.output_names = [o.name for o in self.session.get_outputs()]
        self.continuous = "mean" in self.output_names
        nvec = self.session.get_modelmeta().custom_metadata_map.get(NVEC_KEY)
        self.nvec = tuple(int(n) for n in json.loads(nvec)) if nvec else None

    def act(self, obs: np.ndarray, action_mask: np.ndarray | None = None, greedy: bool = False,
            rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Actions and their log-probabilities for one observation or a batch.

        Args:
            obs: ``[*obs_shape]`` or ``[N, *obs_shape]``.
            action_mask: ``[n]`` or ``[N, n]`` booleans, true where legal (Discrete only; for
                MultiDiscrete the components' masks side by side, ``n = sum(nvec)``).
            greedy: The most likely action (Discrete) or the mean (Box) instead of sampling.
            rng: A numpy generator or a seed for sampling.

        Returns:
            ``(actions, log_probs)``; unbatched when ``obs`` was one observation. Box actions
            are raw Gaussian samples: clip them with :meth:`clip` before the game uses them.
        """
        batch, single = self._batch(obs)
        mask = self._mask(action_mask, single)
        out = self.outputs(batch, mask)
        rng = np.random.default_rng(rng)
        if self.continuous:
            actions, logp = _act_gaussian(out["mean"], out["log_std"], greedy, rng)
        else:
            logits = _apply_mask(out["logits"], mask)
            actions, logp = (_act_categorical(logits, greedy, rng) if self.nvec is None
                             else _act_multi(logits, self.nvec, greedy, rng))
        return (actions[0], logp[0]) if single else (actions, logp)

    def value(self, obs: np.ndarray) -> np.ndarray:
        """State values V(obs): one float32 for one observation, ``[N]`` for a batch."""
        batch, single = self._batch(obs)
        mask = self._mask(None, single) if self.masked else None
        value = self.outputs(batch, mask)["value"]
        return value[0] if single else value

    def log_prob(self, obs: np.ndarray, actions: np.ndarray,
                 action_mask: np.ndarray | None = None) -> np.ndarray:
        """Log-probabilities of given actions (a batch), as the PyTorch policy computes them."""
        batch, single = self._batch(obs)
        mask = self._mask(action_mask, single)
        out = self.outputs(batch, mask)
        if self.continuous:
            mean = out["mean"]
            return _gaussian_log_prob(mean, out["log_std"], np.reshape(actions, mean.shape))
        logits = _apply_mask(out["logits"], mask)
        if self.nvec is not None:
            actions = np.reshape(actions, (len(logits), len(self.nvec)))
            return sum(_categorical_log_prob(part, actions[:, i])
                       for i, part in enumerate(_split(logits, self.nvec)))
        return _categorical_log_prob(logits, np.reshape(actions, len(logits)))

    def outputs(self, obs: np.ndarray, action_mask: np.ndarray | None = None) -> dict[str, Any]:
        """The graph's raw outputs for a batch, by name."""
        feeds = {"obs": np.ascontiguousarray(obs, dtype=self.obs_dtype)}
        if self.masked:
            feeds["action_mask"] = (np.ones((len(obs), self._mask_width), bool)
                                    if action_mask is None
                                    else np.ascontiguousarray(action_mask, dtype=bool))
        return dict(zip(self.output_names, self.session.run(self.output_names, feeds), strict=True))

    def clip(self, actions: np.ndarray) -> np.ndarray:
        """Box actions clipped to the manifest's bounds (unchanged without bounds)."""
        action = (self.manifest or {}).get("action", {})
        if not self.continuous or "low" not in action:
            return actions
        return np.clip(actions, action["low"], action["high"]).astype(np.float32)

    def _batch(self, obs: np.ndarray) -> tuple[np.ndarray, bool]:
        """``obs`` as a batch, and whether it was one observation."""
        obs = np.asarray(obs)
        if obs.shape == self.obs_shape:
            return obs[None], True
        if obs.shape[1:] != self.obs_shape:
            raise ValueError(f"observation shape {obs.shape}: the policy takes "
                             f"{self.obs_shape} or a batch [N, *{self.obs_shape}]")
        return obs, False

    def _mask(self, mask: np.ndarray | None, single: bool) -> np.ndarray | None:
        """The mask as a bool batch (None stays None)."""
        if mask is None:
            return None
        mask = np.asarray(mask, dtype=bool)
        return mask[None] if single else mask


def _model_bytes(path_or_bytes: str | os.PathLike[str] | bytes) -> bytes:
    """The model's bytes, read from a file when given a path."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    return Path(path_or_bytes).read_bytes()


def _check_sha(data: bytes, manifest: dict[str, Any]) -> None:
    """Refuse a model whose bytes are not the ones its manifest describes."""
    expected = manifest.get("sha256")
    digest = hashlib.sha256(data).hexdigest()
    if expected is not None and digest != expected:
        raise ValueError(f"the model's sha256 is {digest} but its manifest says {expected}: "
                         "a corrupt or mismatched download")


def _apply_mask(logits: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Illegal actions' logits set to :data:`MASKED_LOGIT` (a masked graph already did)."""
    return logits if mask is None else np.where(mask, logits, np.float32(MASKED_LOGIT))


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 (stable for -1e9 logits)."""
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _categorical_log_prob(logits: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Log-probability of integer actions under softmax(logits), float32."""
    picked = np.take_along_axis(_log_softmax(logits), actions.astype(np.int64)[:, None], -1)
    return picked[:, 0].astype(np.float32)


def _act_categorical(logits: np.ndarray, greedy: bool,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Argmax, or a Gumbel-max sample (illegal logits never win), with log-probs."""
    scores = logits if greedy else logits + rng.gumbel(size=logits.shape)
    actions = np.argmax(scores, axis=-1).astype(np.int64)
    return actions, _categorical_log_prob(logits, actions)


def _split(logits: np.ndarray, nvec: tuple[int, ...]) -> list[np.ndarray]:
    """Each component's logits of a multi-discrete policy."""
    return np.split(logits, np.cumsum(nvec)[:-1], axis=-1)


def _act_multi(logits: np.ndarray, nvec: tuple[int, ...], greedy: bool,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One categorical choice per component, ``[N, K]``, and the summed log-probs."""
    picked = [_act_categorical(part, greedy, rng) for part in _split(logits, nvec)]
    return (np.stack([a for a, _ in picked], axis=-1),
            np.sum([lp for _, lp in picked], axis=0).astype(np.float32))


def _gaussian_log_prob(mean: np.ndarray, log_std: np.ndarray,
                       actions: np.ndarray) -> np.ndarray:
    """Diagonal-Gaussian log-density summed over action dimensions, float32."""
    log_std = log_std.astype(np.float64)
    z = (actions.astype(np.float64) - mean) * np.exp(-log_std)
    return (-(0.5 * z**2 + log_std + 0.5 * _LOG_2PI).sum(-1)).astype(np.float32)


def _act_gaussian(mean: np.ndarray, log_std: np.ndarray, greedy: bool,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The mean, or ``mean + exp(log_std) * eps``, with log-densities."""
    actions = mean if greedy else mean + np.exp(log_std) * rng.standard_normal(mean.shape)
    actions = actions.astype(np.float32)
    return actions, _gaussian_log_prob(mean, log_std, actions)
