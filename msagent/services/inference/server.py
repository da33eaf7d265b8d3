"""The inference server (SEED-RL style): batched ``predict`` for many policies at once."""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np

from msagent.envs import Acted
from msagent.policy import ActOutput
from msagent.policy.cache import PolicyCache
from msagent.policy.devices import device_name, resolve_device
from msagent.runtime import call, register
from msagent.services.model_pool import PoolClient
from msagent.services.params import PolicyFollower
from msagent.user_scripts import build_policy
from msagent.vocabulary import ModelKey, PolicyScripts, PredictRequest


class InferenceServer:
    """Answers predict requests; frozen snapshots are kept in an LRU cache by ModelKey. Its
    policies run on ``device`` (``services.inference.device``); answers are numpy on the CPU."""

    def __init__(self, scripts: PolicyScripts, cache_size: int = 8, device: str = "cpu") -> None:
        self.scripts, self.cache_size = scripts, cache_size
        self.device = resolve_device(device, "services.inference.device")  # fails early
        if self.device.type != "cpu":
            logging.getLogger("msagent.inference").info("inference server runs on %s",
                                                        device_name(self.device))
        self._followers: dict[str, PolicyFollower] = {}
        self._frozen = PolicyCache(self._build, pull_weights, cache_size)
        self._stop = threading.Event()

    @register(batch=8, max_wait_ms=2.0, direct=True)
    def predict(self, request: list[PredictRequest]) -> list[Acted]:
        """One forward pass per policy for all requests of the batch; each gets its rows."""
        answers: list[Acted | None] = [None] * len(request)
        groups: dict[tuple[str, int | None, bool], list[int]] = {}
        for i, req in enumerate(request):
            groups.setdefault((req.policy_id, req.version, req.greedy), []).append(i)
        for (policy_id, version, greedy), idx in groups.items():
            policy, key = self._policy(policy_id, version, max(request[i].min_version for i in idx))
            batch = [request[i] for i in idx]
            out = policy.act(np.concatenate([r.obs for r in batch]), _masks(batch), greedy,
                             values=any(r.values for r in batch), state=_states(policy, batch))
            for i, part in zip(idx, _split(out, [len(request[i].obs) for i in idx])):
                answers[i] = Acted(part, key)
        return answers  # type: ignore[return-value]

    def _policy(self, policy_id: str, version: int | None,
                min_version: int) -> tuple[Any, ModelKey]:
        """The trainable policy (newest weights) or a frozen snapshot, and its key."""
        if version is None:
            follower = self._followers.get(policy_id)
            if follower is None:
                follower = self._followers[policy_id] = PolicyFollower(
                    self._build(policy_id), policy_id, background=True)
            follower.wait_for(min_version, self._stop) if min_version > follower.version \
                else follower.refresh()
            return follower.policy, ModelKey(policy_id, follower.version)
        return self._snapshot(ModelKey(policy_id, version)), ModelKey(policy_id, version)

    def _snapshot(self, key: ModelKey) -> Any:
        """A frozen snapshot from the LRU cache, pulled from the model pool on a miss."""
        return self._frozen.get(key)

    def _build(self, policy_id: str) -> Any:
        """A fresh policy of ``policy_id``'s shape, on the server's device."""
        s = self.scripts
        return build_policy(s.env_script, s.agent_for(policy_id), s.env_params,
                            s.seed).to(self.device)



class InferenceClient:
    """The calls acting makes to ``InferenceServer``, typed (requests are batched by the
    runtime up to the server's ``batch``)."""

    @staticmethod
    def predict(request: PredictRequest) -> Acted:
        """One group of observations decided by the server's copy of the policy."""
        return call(InferenceServer.predict, request)

def pull_weights(key: ModelKey) -> Any:
    """A snapshot's weights from the model pool service."""
    return PoolClient.pull(key).weights


def configured(batch: int, max_wait_ms: float) -> type[InferenceServer]:
    """An InferenceServer whose ``predict`` batches as the config says."""

    if batch <= 1:  # batch=1 disables batching: one request in, one answer out

        class UnbatchedInferenceServer(InferenceServer):
            @register(direct=True)
            def predict(self, request: PredictRequest) -> Acted:
                return InferenceServer.predict(self, [request])[0]

        return UnbatchedInferenceServer

    class ConfiguredInferenceServer(InferenceServer):
        @register(batch=batch, max_wait_ms=max_wait_ms, direct=True)
        def predict(self, request: list[PredictRequest]) -> list[Acted]:
            return InferenceServer.predict(self, request)

    return ConfiguredInferenceServer


def mean_batch_size(stats: list[dict[str, Any]]) -> float | None:
    """Mean requests per ``predict`` call over a handle's ``stats()`` (None before any call),
    the figure that says whether central inference batches."""
    sizes: dict[int, int] = {}
    for instance in stats:
        for size, count in instance["batch_sizes"].get("predict", {}).items():
            sizes[int(size)] = sizes.get(int(size), 0) + count
    calls = sum(sizes.values())
    return sum(s * c for s, c in sizes.items()) / calls if calls else None


def _masks(requests: list[PredictRequest]) -> np.ndarray | None:
    """The requests' action masks stacked, or None when any request has none."""
    masks = [r.action_mask for r in requests]
    return None if any(m is None for m in masks) else np.concatenate(masks)


def _states(policy: Any, requests: list[PredictRequest]) -> np.ndarray | None:
    """The requests' recurrent states stacked, zeros for requests of fresh episodes."""
    if not policy.recurrent or all(r.state is None for r in requests):
        return None
    return np.concatenate([policy.initial_state(len(r.obs)) if r.state is None else r.state
                           for r in requests])


def _split(out: ActOutput, sizes: list[int]) -> list[ActOutput]:
    """Cut a batched ActOutput back into per-request pieces."""
    bounds = np.cumsum([0, *sizes])
    return [out.rows(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
