"""The acting policy as an ONNX graph game clients run with onnxruntime, without torch.

The graph holds everything ``Policy.act`` computes before it samples: the cast of the
observation (``uint8`` images are scaled to [0, 1] inside the CNN), the flattening of
``flatten`` networks, both towers, and the action mask. A client samples from its outputs:

* Discrete: inputs ``obs`` [batch, *obs] and (when masked) ``action_mask`` [batch, n] bool,
  true where legal; outputs ``logits`` [batch, n] (illegal ones are ``-1e9``: exactly what the
  policy samples from) and ``value`` [batch].
* Box: input ``obs``; outputs ``mean`` [batch, d], ``log_std`` [batch, d] and ``value``
  [batch]; actions are ``mean + exp(log_std) * N(0, 1)``, clipped to the manifest's bounds.

The TorchScript exporter writes opset 15, which game engines' runtimes (Barracuda, Sentis,
ONNX Runtime mobile) read.
"""

from __future__ import annotations

import io
import warnings
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from msagent.errors import MsagentError, UserError
from msagent.policy import operators as ops
from msagent.policy.policy import Policy
from msagent.exporting.model_store import Manifest, ModelStore

OPSET = 15

NVEC_KEY = "msagent.action_nvec"
"""The graph's metadata entry (a JSON list) that tells clients a multi-discrete policy's
``logits`` are its components' side by side, ``nvec[i]`` each."""
"""The ONNX opset of exported graphs (at most what common game-engine runtimes read)."""
BATCH = "batch"
ObsDtype = Literal["float32", "uint8"]


class ParityError(MsagentError, ValueError):
    """The ONNX graph's outputs differ from the PyTorch policy's by more than allowed."""


class ActingGraph(nn.Module):
    """``Policy.act`` up to sampling, as one module the exporter can trace."""

    def __init__(self, policy: Policy, masked: bool) -> None:
        """Share the policy's towers (no copy); ``masked`` adds the ``action_mask`` input."""
        super().__init__()
        self.actor, self.critic = policy.model.actor, policy.model.critic
        self.log_std = policy.model.log_std
        self.flatten = policy._input_shape is not None
        self.masked = masked

    def forward(self, obs: Tensor, action_mask: Tensor | None = None) -> tuple[Tensor, ...]:
        """``(logits, value)`` for discrete actions, ``(mean, log_std, value)`` for a Box."""
        x = torch.flatten(obs, 1) if self.flatten else obs
        out, value = self.actor(x), self.critic(x).squeeze(-1)
        if self.log_std is not None:
            return out, self.log_std.expand_as(out), value
        if self.masked:
            out = ops.masked_logits(out, action_mask)
        return out, value


def obs_dtype_of(space: Any) -> ObsDtype:
    """``uint8`` for a byte observation space (images), else ``float32``: what the policy is
    given, and so what the graph takes."""
    return "uint8" if np.dtype(getattr(space, "dtype", np.float32)) == np.uint8 else "float32"


def uses_masks(policy: Policy, masked: bool | None) -> bool:
    """Whether the graph takes ``action_mask``: as told, else every discrete policy does (a
    client of a game without masks passes all-true; one with masks must never lose them)."""
    if policy.action_spec.continuous:
        if masked:
            raise ValueError("action masks need a discrete action space")
        return False
    return True if masked is None else bool(masked)


def graph_obs_shape(policy: Policy) -> tuple[int, ...]:
    """One observation as the client gives it: the env's shape (before any flattening)."""
    return tuple(policy._input_shape or policy.obs_shape)


def input_specs(policy: Policy, masked: bool, obs_dtype: ObsDtype) -> list[dict[str, Any]]:
    """The graph's inputs as manifest entries."""
    obs_shape = graph_obs_shape(policy)
    specs = [{"name": "obs", "shape": [BATCH, *obs_shape], "dtype": obs_dtype}]
    if masked:
        specs.append({"name": "action_mask", "shape": [BATCH, policy.action_spec.size],
                      "dtype": "bool"})
    return specs


def output_specs(policy: Policy) -> list[dict[str, Any]]:
    """The graph's outputs as manifest entries."""
    size = policy.action_spec.size
    names = ("mean", "log_std") if policy.action_spec.continuous else ("logits",)
    specs = [{"name": n, "shape": [BATCH, size], "dtype": "float32"} for n in names]
    return specs + [{"name": "value", "shape": [BATCH], "dtype": "float32"}]


def action_info(policy: Policy) -> dict[str, Any]:
    """``{"n": n}``, ``{"nvec": [n0, n1, ...]}`` or ``{"shape": [d], "low": [...], "high":
    [...]}`` for the manifest."""
    spec = policy.action_spec
    if spec.nvec is not None:
        return {"nvec": list(spec.nvec)}
    if not spec.continuous:
        return {"n": spec.size}
    bounds = {} if spec.low is None else {"low": list(spec.low), "high": list(spec.high)}
    return {"shape": [spec.size], **bounds}


def example_inputs(policy: Policy, masked: bool, obs_dtype: ObsDtype, batch: int,
                   seed: int = 0) -> dict[str, np.ndarray]:
    """Random graph inputs: observations (normal floats or any bytes) and masks with at
    least one legal action per row."""
    rng = np.random.default_rng(seed)
    shape = (batch, *graph_obs_shape(policy))
    if obs_dtype == "uint8":
        feeds = {"obs": rng.integers(0, 256, shape, dtype=np.uint8)}
    else:
        feeds = {"obs": (2.0 * rng.standard_normal(shape)).astype(np.float32)}
    if masked:
        feeds["action_mask"] = random_masks(rng, batch, policy.action_spec.nvec
                                            or (policy.action_spec.size,))
    return feeds


def random_masks(rng: np.random.Generator, batch: int, nvec: tuple[int, ...]) -> np.ndarray:
    """``[batch, sum(nvec)]`` random masks with at least one legal choice per component."""
    parts = []
    for n in nvec:
        mask = rng.random((batch, n)) < 0.5
        mask[np.arange(batch), rng.integers(0, n, batch)] = True
        parts.append(mask)
    return np.concatenate(parts, axis=1)


def export_onnx(policy: Policy, masked: bool | None = None,
                obs_dtype: ObsDtype = "float32") -> bytes:
    """The policy's acting computation as ONNX bytes (opset 15, dynamic batch axis).

    Args:
        policy: The policy; its weights are read, not changed.
        masked: Add the ``action_mask`` input (default: for every discrete policy).
        obs_dtype: What observations the client feeds: the env's (see :func:`obs_dtype_of`).
    """
    if policy.recurrent:
        raise UserError("ONNX export covers feed-forward policies; this agent's network has "
                           "an LSTM core (NetworkConfig.lstm > 0), whose state a client would "
                           "have to carry: not supported yet")
    masked = uses_masks(policy, masked)
    graph = ActingGraph(policy, masked)  # the exporter traces in eval mode, then restores
    inputs = example_inputs(policy, masked, obs_dtype, batch=2)
    names = [s["name"] for s in output_specs(policy)]
    axes = {name: {0: BATCH} for name in [*inputs, *names]}
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(graph, tuple(torch.from_numpy(v) for v in inputs.values()), buffer,
                          dynamo=False, opset_version=OPSET, input_names=list(inputs),
                          output_names=names, dynamic_axes=axes)
    nvec = policy.action_spec.nvec
    return buffer.getvalue() if nvec is None else _with_metadata(buffer.getvalue(), nvec)


def _with_metadata(onnx_bytes: bytes, nvec: tuple[int, ...]) -> bytes:
    """The graph with :data:`NVEC_KEY` in its metadata, so that a client without the
    manifest still splits the logits right."""
    import json

    import onnx

    model = onnx.load_from_string(onnx_bytes)
    onnx.helper.set_model_props(model, {NVEC_KEY: json.dumps(list(nvec))})
    return model.SerializeToString()


def torch_outputs(policy: Policy, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the policy's own acting path computes for the graph's inputs, by output name."""
    x = policy._obs_tensor(feeds["obs"])
    with torch.inference_mode():
        out, value = policy._forward_inference(x)
        if policy.action_spec.continuous:
            log_std = policy.model.log_std.expand_as(out)
            return {"mean": out.numpy(), "log_std": log_std.numpy(), "value": value.numpy()}
        mask = feeds.get("action_mask")
        logits = ops.masked_logits(out, None if mask is None else torch.from_numpy(mask))
        return {"logits": logits.numpy(), "value": value.numpy()}


def onnx_outputs(onnx_bytes: bytes, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The graph's outputs for ``feeds``, run by onnxruntime on the CPU."""
    import onnxruntime

    session = onnxruntime.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def check_parity(policy: Policy, onnx_bytes: bytes, samples: int = 256, seed: int = 0,
                 feeds: dict[str, np.ndarray] | None = None) -> float:
    """Max abs difference between onnxruntime's and PyTorch's outputs, every output included.

    Args:
        policy: The policy the graph was exported from.
        onnx_bytes: The graph.
        samples: Random inputs to compare on (when ``feeds`` is None).
        seed: Seed of the random inputs.
        feeds: Inputs to compare on instead (e.g. real observations and masks); their masks
            reach the policy even when the graph takes none (then the graph is wrong).
    """
    ours, theirs = _both_outputs(policy, onnx_bytes, samples, seed, feeds)
    return max(float(np.max(np.abs(ours[k] - theirs[k]), initial=0.0)) for k in ours)


def _both_outputs(policy: Policy, onnx_bytes: bytes, samples: int, seed: int,
                  feeds: dict[str, np.ndarray] | None) -> tuple[dict[str, np.ndarray],
                                                                dict[str, np.ndarray]]:
    """PyTorch's and onnxruntime's outputs on the same inputs (see :func:`check_parity`)."""
    masked, obs_dtype = _graph_inputs(onnx_bytes)
    if feeds is None:
        feeds = example_inputs(policy, masked, obs_dtype, samples, seed)
    graph_feeds = _graph_feeds(feeds, masked, obs_dtype, policy.action_spec.size)
    mask = feeds.get("action_mask")
    policy_feeds = graph_feeds if mask is None else {**graph_feeds,
                                                     "action_mask": np.asarray(mask, bool)}
    ours, theirs = torch_outputs(policy, policy_feeds), onnx_outputs(onnx_bytes, graph_feeds)
    if set(ours) != set(theirs):
        raise ParityError(f"the graph outputs {sorted(theirs)}, the policy {sorted(ours)}")
    return ours, theirs


def _parity_gap(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray], atol: float,
                rtol: float) -> tuple[float, str | None]:
    """The max abs difference, and what is wrong where one exceeds ``atol + rtol * |ours|``
    (None: nothing)."""
    largest, problem, worst = 0.0, None, 1.0
    for name, mine in ours.items():
        diff = np.abs(mine - theirs[name])
        largest = max(largest, float(np.max(diff, initial=0.0)))
        ratio = diff / (atol + rtol * np.abs(mine))
        if ratio.size and float(ratio.max()) > worst:
            at = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
            worst, problem = float(ratio.max()), (f"{name} differs by {float(diff[at]):.3g} "
                                                  f"where PyTorch gives {float(mine[at]):.6g}")
    return largest, problem


def _graph_feeds(feeds: dict[str, np.ndarray], masked: bool, obs_dtype: ObsDtype,
                 n: int) -> dict[str, np.ndarray]:
    """``feeds`` in the graph's dtypes, all-legal masks where a masked graph got none."""
    obs = np.asarray(feeds["obs"], obs_dtype)
    if not masked:
        return {"obs": obs}
    mask = feeds.get("action_mask")
    mask = np.ones((len(obs), n), bool) if mask is None else np.asarray(mask, bool)
    return {"obs": obs, "action_mask": mask}


def _graph_inputs(onnx_bytes: bytes) -> tuple[bool, ObsDtype]:
    """Whether the graph takes a mask, and its observation dtype."""
    import onnx

    graph = onnx.load_from_string(onnx_bytes).graph
    inputs = {i.name: i.type.tensor_type.elem_type for i in graph.input}
    uint8 = inputs["obs"] == onnx.TensorProto.UINT8
    return "action_mask" in inputs, "uint8" if uint8 else "float32"


def opset_of(onnx_bytes: bytes) -> int:
    """The default-domain opset a serialized model declares."""
    import onnx

    model = onnx.load_from_string(onnx_bytes)
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def manifest_info(policy: Policy, onnx_bytes: bytes, source: dict[str, Any]) -> dict[str, Any]:
    """The manifest fields an exported graph determines (all but version, checksum, time)."""
    masked, obs_dtype = _graph_inputs(onnx_bytes)
    return {"opset": opset_of(onnx_bytes), "inputs": input_specs(policy, masked, obs_dtype),
            "outputs": output_specs(policy), "action": action_info(policy),
            "source": dict(source)}


RTOL = 1e-5
"""Parity's allowance relative to an output's size: float32 keeps about 7 digits, so a value
head answering 400 differs from onnxruntime's by ~1e-4 with nothing wrong."""


def checked_export(policy: Policy, masked: bool | None = None, obs_dtype: ObsDtype = "float32",
                   atol: float = 1e-5,
                   feeds: dict[str, np.ndarray] | None = None) -> tuple[bytes, float]:
    """:func:`export_onnx` and its parity (max abs difference) on random inputs and on
    ``feeds`` (e.g. real observations), refused where a difference passes ``atol`` plus
    :data:`RTOL` times the output's size.

    Raises:
        ParityError: naming the difference found and the tolerance.
    """
    onnx_bytes = export_onnx(policy, masked, obs_dtype)
    largest = 0.0
    for inputs in ([None] if feeds is None else [None, feeds]):
        diff, problem = _parity_gap(*_both_outputs(policy, onnx_bytes, 256, 0, inputs), atol,
                                    RTOL)
        if problem is not None:
            raise ParityError(f"the ONNX export differs from the PyTorch policy: {problem} "
                              f"(allowed {atol:g} + {RTOL:g} x |output|); not published")
        largest = max(largest, diff)
    return onnx_bytes, largest


def publish_policy(policy: Policy, store: ModelStore, game: str, source: dict[str, Any],
                   atol: float = 1e-5, masked: bool | None = None,
                   obs_dtype: ObsDtype = "float32") -> Manifest:
    """Export the policy, check its parity with PyTorch, and publish it as the game's next
    version (refused with a :class:`ParityError` above ``atol``)."""
    onnx_bytes, _ = checked_export(policy, masked, obs_dtype, atol)
    return store.publish(game, onnx_bytes, manifest_info(policy, onnx_bytes, source))
