"""Simulated game clients: each downloads the newest published model, plays a Gymnasium env
with it, and uploads every episode (with the behaviour's log-probs and the model version), as
real game clients would. ``examples/client_loop`` and the end-to-end test run them."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from msagent.client.onnx_policy import OnnxPolicy
from msagent.client.play import play_episode

MODEL_CHECK_S = 1.0
"""How often a client asks the gateway whether a newer model was published."""


@dataclass
class ClientSettings:
    """Who the simulated clients are and what they play.

    Attributes:
        url: The gateway's base URL.
        token: An API token with the upload and download scopes.
        game: The game's name at the gateway.
        env_id: The Gymnasium env the clients play.
        clients: Client threads.
        cache_dir: Where downloaded models are cached.
        seed: Seeds the envs and the action sampling.
    """

    url: str
    token: str
    game: str
    env_id: str
    clients: int = 4
    cache_dir: str = ".msagent-client-cache"
    seed: int = 0


@dataclass
class Played:
    """Returns of uploaded episodes per model version, and the upload failures seen."""

    returns: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, version: int, episode_return: float) -> None:
        """Record one uploaded episode's return under the model version that played it."""
        with self.lock:
            self.returns[version].append(episode_return)

    def mean_returns(self) -> dict[int, tuple[int, float]]:
        """Per model version: (episodes, mean return)."""
        with self.lock:
            return {v: (len(r), float(np.mean(r))) for v, r in sorted(self.returns.items())}


def run_clients(settings: ClientSettings, stop: threading.Event,
                played: Played | None = None) -> Played:
    """Run the clients until ``stop`` is set; what they played."""
    played = played or Played()
    threads = [threading.Thread(target=_client, args=(settings, i, stop, played), daemon=True,
                                name=f"client-{i}") for i in range(settings.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return played


def _client(settings: ClientSettings, index: int, stop: threading.Event, played: Played) -> None:
    """One client: newest model, one episode, one upload; again until stopped."""
    import gymnasium as gym

    from msagent.client.http import GatewayClient

    client = GatewayClient(settings.url, settings.token, client_version=f"sim-{index}")
    env, rng = gym.make(settings.env_id), np.random.default_rng(settings.seed * 1000 + index)
    cache = Path(settings.cache_dir) / f"client-{index}"
    model, checked, episode = _Model(), 0.0, 0
    while not stop.is_set():
        if time.monotonic() - checked > MODEL_CHECK_S:
            model.refresh(client, settings.game, cache)
            checked = time.monotonic()
        if model.policy is None:
            stop.wait(0.2)
            continue
        played_episode = play_episode(env, model.policy, rng,
                                      seed=settings.seed * 1_000_000 + index * 10_000 + episode)
        episode += 1
        try:
            client.upload_episode(settings.game, model_version=model.version,
                                  **played_episode.upload_fields())
        except Exception as exc:  # counted and shown; the next episode goes on
            with played.lock:
                played.failures.append(f"client {index}: {exc}")
            continue
        played.add(model.version, played_episode.episode_return)


@dataclass
class _Model:
    """The model a client holds (None until one is published)."""

    policy: Any = None
    version: int = 0

    def refresh(self, client: Any, game: str, cache: Path) -> None:
        """Download the newest model if it changed (the client caches by sha256)."""
        try:
            found = client.download_model(game, cache)
        except Exception:
            return  # no model yet, or the gateway is restarting: keep the current one
        if found is None:
            return
        manifest, path = found
        version = int(manifest["version"])
        if version != self.version:
            self.policy, self.version = OnnxPolicy(path, manifest), version
