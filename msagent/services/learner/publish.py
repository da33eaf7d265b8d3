"""The learner's publishing of its acting policy as ONNX for game clients (``[publish]``):
every N-th snapshot and once at the end, into the model store the gateway serves."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("msagent.publish")
PARITY_ATOL = 1e-4
"""Largest ONNX-vs-PyTorch output difference a trained policy is published with: a trained
network's logits reach tens, where float32 rounding alone differs by ~1e-5 between the two
runtimes (the parity tests hold fresh policies to 1e-5)."""


@dataclass(frozen=True)
class PublishSettings:
    """Where and how often: the model store, the game's name, every N-th snapshot."""

    models: str
    game: str
    every_snapshots: int = 1


class Publisher:
    """Exports, checks and publishes the policy; remembers the last version it published."""

    def __init__(self, settings: PublishSettings, run_dir: str | None, policy_id: str,
                 scripts: Any) -> None:
        from msagent.exporting.model_store import ModelStore

        self.s, self.run_dir, self.policy_id = settings, run_dir, policy_id
        self.scripts = scripts
        self.store = ModelStore(settings.models)
        self.published: int | None = None
        self.failures = 0
        self._game: Any = None
        self._cpu_policy: Any = None

    def _graph_options(self) -> dict[str, Any]:
        """The game's observation dtype and whether it masks actions (learned once, by random
        play of the user's env script), so the graph takes what clients will feed it."""
        if self._game is None:
            from msagent.exporting.run_export import sample_game

            self._game = sample_game(self.scripts.env_script, self.scripts.env_params)
        return {"masked": self._game.masked, "obs_dtype": self._game.obs_dtype}

    def _on_cpu(self, policy: Any) -> Any:
        """The policy itself, or for a learner training on a GPU a CPU copy of its weights:
        the graph is traced, and checked against PyTorch, on the CPU clients act on."""
        if policy.device.type == "cpu":
            return policy
        if self._cpu_policy is None:
            from msagent.user_scripts import build_policy

            sc = self.scripts
            self._cpu_policy = build_policy(sc.env_script, sc.agent_for(self.policy_id),
                                            sc.env_params, sc.seed)
        self._cpu_policy.set_weights(policy.get_weights())
        self._cpu_policy.invalidate_cache()
        return self._cpu_policy

    def after_snapshot(self, policy: Any, snapshots: int, param_version: int) -> None:
        """Publish when this snapshot is an N-th one."""
        if snapshots % self.s.every_snapshots == 0:
            self.publish(policy, param_version)

    def publish(self, policy: Any, param_version: int) -> None:
        """Publish now, unless this parameter version already is; a failure is logged and
        counted, never fatal to training (clients keep the previous model)."""
        if self.published == param_version:
            return
        from msagent.exporting.onnx_export import publish_policy

        source = {"run_dir": self.run_dir, "policy": self.policy_id,
                  "param_version": param_version}
        try:
            manifest = publish_policy(self._on_cpu(policy), self.store, self.s.game, source,
                                      atol=PARITY_ATOL, **self._graph_options())
        except Exception:
            self.failures += 1
            log.exception("could not publish %s version %d as ONNX", self.policy_id,
                          param_version)
            return
        self.published = param_version
        log.info("published %s v%d (params %d) to %s", self.s.game, manifest.version,
                 param_version, self.s.models)
