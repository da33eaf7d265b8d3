"""A Redis URL's password from the environment (``${VAR}``) or a file (``${file:/path}``),
expanded only when connecting: the model pool and the league mirror reach a real
password-protected Redis, and the run directory's config.toml keeps the placeholder."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
import redis

from msagent.config import load_config
from msagent.errors import ConfigError
from msagent.league import LeagueSettings
from msagent.model_pool import ModelPool, make_store
from msagent.services.league import LeagueService, read_league
from msagent.services.model_pool import ModelPoolService
from msagent.train.prepare import open_run_dir
from msagent.vocabulary import ModelKey
from tests.redis_server import protected_redis

REPO = Path(__file__).resolve().parents[2]
VARIABLE = "MSAGENT_TEST_REDIS_PASSWORD"


@pytest.fixture()
def password() -> str:
    """A password with characters a URL must escape (the expansion percent-encodes it)."""
    return f"p@ss/{uuid.uuid4().hex}:#"


def test_a_model_pool_url_takes_its_password_from_the_environment(
        tmp_path: Path, password: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(VARIABLE, password)
    with protected_redis(tmp_path / "redis", password) as port:
        url = f"redis://:${{{VARIABLE}}}@127.0.0.1:{port}/0"
        cfg = load_config(REPO / "examples" / "cartpole_ppo.toml", [
            f"run.root={json.dumps(str(tmp_path / 'runs'))}",
            f"services.model_pool.url={json.dumps(url)}"])
        run = open_run_dir(cfg, None)
        pool = ModelPoolService(cfg.services.model_pool.url, namespace=run.run_id)
        assert pool.push("main", {"w": np.ones(3, np.float32)}) == ModelKey("main", 1)
        league = LeagueService(LeagueSettings(), seed=0, mirror_url=url, namespace=run.run_id)
        league.mirror.client.set("probe", "1")  # raises unless the mirror authenticated
        league.mirror.write({"players": []})
        assert read_league(url, run.run_id) == {"players": []}
        direct = redis.Redis(port=port, password=password)
        assert any(run.run_id in key.decode() for key in direct.keys("*"))
        direct.close()
    saved = run.config_path.read_text()
    assert f"${{{VARIABLE}}}@127.0.0.1:{port}" in saved and password not in saved
    assert cfg.services.model_pool.url == url  # the config object never holds the secret


def test_a_password_file_is_read_and_a_missing_secret_is_one_clear_error(
        tmp_path: Path, password: str, monkeypatch: pytest.MonkeyPatch):
    secret = tmp_path / "redis.password"
    secret.write_text(password + "\n")
    secret.chmod(0o600)
    with protected_redis(tmp_path / "redis", password) as port:
        pool = ModelPool(make_store(f"redis://:${{file:{secret}}}@127.0.0.1:{port}/0"))
        assert pool.push("main", {"w": np.zeros(2, np.float32)}) == ModelKey("main", 1)
        pool.store.close()
    monkeypatch.delenv(VARIABLE, raising=False)
    with pytest.raises(ConfigError, match=f"environment variable {VARIABLE} is not set"):
        make_store(f"redis://:${{{VARIABLE}}}@127.0.0.1:6379/0")
    with pytest.raises(ConfigError, match="cannot read the secret file .*nowhere"):
        make_store(f"redis://:${{file:{tmp_path / 'nowhere'}}}@127.0.0.1:6379/0")
