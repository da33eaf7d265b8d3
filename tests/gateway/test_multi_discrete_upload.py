"""A game with MultiDiscrete actions through the gateway: ``[[gateway.games]]`` declares it
(``action_nvec``) or an env id gives it; uploads of ``[T, K]`` integer actions (msgpack and
JSON) reach the stream, the ingestion consumer stores them, and they read back as they were
sent; anything outside the space is a 422 naming the step and component."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import redis

from msagent.config.gateway import GatewayConfig, load_gateway_config
from msagent.errors import ConfigError
from msagent.experience.ingest import Ingestor
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_keys import StreamKeys
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import GAMES, Api, Stream, bearer, episode, make_config

NVEC = [3, 2]
TWIN = {"name": "twin", "obs_shape": [5], "action_nvec": NVEC, "max_steps": 100}


@pytest.fixture
def twin_cfg(tmp_path: Path) -> GatewayConfig:
    """The test config with a MultiDiscrete game beside the usual ones."""
    return make_config(tmp_path, rate_per_s=1e6, burst=1_000_000, games=GAMES + [TWIN])


@pytest.fixture
def token(twin_cfg: GatewayConfig) -> str:
    """An upload-and-download token of the config."""
    return TokenStore.of_data_dir(twin_cfg.data_dir).create("alice", ("upload", "download"),
                                                              all_games=True)[1]


@pytest.fixture
def twin_api(twin_cfg: GatewayConfig, token: str, redis_url: str) -> Iterator[Api]:
    """The config's app, called in-process."""
    made = Api(twin_cfg, redis_url)
    yield made
    made.close()


@pytest.fixture
def twin_stream(twin_cfg: GatewayConfig, redis_url: str) -> Iterator[Stream]:
    """The config's stream (its keys deleted afterwards)."""
    reader = Stream(twin_cfg, redis_url)
    yield reader
    reader.close()


def twin_episode(steps: int, seed: int, **fields: object) -> dict:
    """A valid upload of the twin game: random answers ``[steps, 2]`` and their log-probs."""
    rng = np.random.default_rng(seed)
    actions = np.stack([rng.integers(0, n, steps) for n in NVEC], axis=1)
    twin = {"observations": rng.random((steps, 5)).astype(np.float32), "actions": actions,
            "log_probs": np.full(steps, -np.log(6.0), np.float32)}
    return episode(steps, game="cartpole", seed=seed, **{**twin, **fields})


def ingest(cfg: GatewayConfig, redis_url: str, store: ExperienceStore, count: int) -> None:
    """Run the config's ingestion consumer until ``count`` records are stored."""
    client = redis.Redis.from_url(redis_url)
    ingestor = Ingestor(redis_url, StreamKeys(cfg.gateway.prefix), store, cfg.schemas(),
                        batch=50, flush_s=0.1, claim_idle_ms=5000)
    stop = threading.Event()
    thread = threading.Thread(target=ingestor.run, args=(stop,), daemon=True)
    thread.start()
    try:
        for _ in range(400):
            if client.xlen(ingestor.keys.stream) == 0 and ingestor.stats.stored >= count:
                break
            stop.wait(0.05)
    finally:
        stop.set()
        thread.join(20)
        client.close()
    assert ingestor.stats.stored == count and ingestor.stats.refused == 0


def test_multi_discrete_uploads_reach_the_store_as_they_were_sent(
        twin_cfg: GatewayConfig, twin_api: Api, token: str, twin_stream: Stream,
        redis_url: str, tmp_path: Path):
    bodies = [twin_episode(12, seed=0), twin_episode(7, seed=1, log_probs=None)]
    for body, fmt in zip(bodies, ["msgpack", "json"]):
        response = twin_api.upload(token, body, game="twin", fmt=fmt)
        assert response.status_code == 201, response.text
    on_stream = twin_stream.records()
    assert [r.action_nvec for r in on_stream] == [(3, 2), (3, 2)]
    store = ExperienceStore(str(tmp_path / "exp"))
    ingest(twin_cfg, redis_url, store, count=2)
    got = {r.episode_id: r for r in store.episodes("twin")}
    for body in bodies:
        record = got[body["episode_id"]]
        assert record.actions.dtype == np.int64 and record.actions.shape == body["actions"].shape
        np.testing.assert_array_equal(record.actions, body["actions"])
        np.testing.assert_array_equal(record.observations, body["observations"])
        assert record.action_nvec == (3, 2) and record.provenance.client_id == "alice"
    np.testing.assert_array_equal(got[bodies[0]["episode_id"]].log_probs,
                                  bodies[0]["log_probs"])
    assert got[bodies[1]["episode_id"]].log_probs is None


@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_actions_outside_the_multi_discrete_space_are_422_naming_the_problem(
        twin_api: Api, token: str, twin_stream: Stream, fmt: str):
    good = twin_episode(4, seed=2)["actions"]
    high = good.copy()
    high[3, 1] = 2
    bad = {"step 3, component 1: 2 is outside 0..1": high,
           "expected shape [4, 2], got [4]": good[:, 0],
           "expected integers, got dtype float": good.astype(np.float32) + 0.5}
    for reason, actions in bad.items():
        body = twin_episode(4, seed=2, actions=actions)
        response = twin_api.upload(token, body, game="twin", fmt=fmt)
        assert response.status_code == 422, (reason, response.text)
        assert response.json()["error"].startswith("actions: ")
        assert reason in response.json()["error"]
    assert len(twin_stream) == 0


def test_the_games_route_shows_the_choices_per_component(twin_api: Api, token: str):
    games = {g["name"]: g for g in twin_api.request("GET", "/v1/games",
                                                    headers=bearer(token)).json()["games"]}
    assert games["twin"]["action_nvec"] == NVEC and games["twin"]["action_n"] is None
    assert games["cartpole"]["action_nvec"] is None


def write_toml(folder: Path, game: str) -> Path:
    """A gateway TOML accepting one game (its ``[[gateway.games]]`` body given)."""
    path = folder / "gateway.toml"
    path.write_text(f'[gateway]\ndata_dir = "data"\n\n[[gateway.games]]\n{game}\n')
    return path


def test_a_toml_game_declares_multi_discrete_actions_with_action_nvec(tmp_path: Path):
    cfg = load_gateway_config(write_toml(tmp_path, 'name = "twin"\nobs_shape = [5]\n'
                                                   'action_nvec = [3, 2]'))
    schema = cfg.schemas()["twin"]
    assert schema.action_nvec == (3, 2) and schema.action_n is schema.action_shape is None


@pytest.mark.parametrize("fields, reason", [
    ("action_n = 6\naction_nvec = [3, 2]", "declare exactly one of action_n (Discrete), "
     "action_nvec (MultiDiscrete) and action_shape (Box); got action_n, action_nvec"),
    ("action_nvec = [3, 0]", "action_nvec must be positive integers"),
    ("action_nvec = []", "action_nvec: Tuple should have at least 1 item"),
    ("", "got none"),
])
def test_a_bad_toml_action_declaration_is_a_config_error_naming_file_and_game(
        tmp_path: Path, fields: str, reason: str):
    path = write_toml(tmp_path, f'name = "twin"\nobs_shape = [5]\n{fields}')
    with pytest.raises(ConfigError) as caught:
        load_gateway_config(path)
    message = str(caught.value)
    assert str(path) in message and "game 'twin'" in message and reason in message


def test_a_game_given_as_an_env_id_takes_its_multi_discrete_actions_from_the_env(
        tmp_path: Path):
    env_id = f"msagent-test/TwinTarget-{uuid.uuid4().hex[:8]}-v0"
    gym.register(env_id, entry_point="tests.experience.twin_target_env:TwinTarget")
    try:
        cfg = load_gateway_config(write_toml(tmp_path, f'name = "twin"\nenv = "{env_id}"'))
        schema = cfg.schemas()["twin"]
    finally:
        gym.registry.pop(env_id)
    assert schema.action_nvec == (3, 2) and schema.obs_shape == (5,)
    with pytest.raises(ConfigError, match="give either env .* or obs_shape"):
        load_gateway_config(write_toml(tmp_path, f'name = "twin"\nenv = "{env_id}"\n'
                                                 'action_nvec = [3, 2]'))
