"""Tokens bound to games (every route refuses a token for another game, before saying whether
the game exists), tokens for all games, token files of before games, and a new token accepted
on the very next request of a running gateway."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from msagent.cli import app as cli
from msagent.exporting.model_store import ModelStore
from msagent.gateway.tokens import TokenError, TokenStore, hash_token
from tests.gateway.conftest import GAMES, Api, Stream, bearer, encode_body, episode
from tests.gateway.test_upload_protocol import Live

INFO = {
    "opset": 15,
    "inputs": [{"name": "obs", "shape": ["batch", 3], "dtype": "float32"}],
    "outputs": [{"name": "mean", "shape": ["batch", 2], "dtype": "float32"},
                {"name": "value", "shape": ["batch"], "dtype": "float32"}],
    "action": {"shape": [2]}, "source": {"policy": "main"},
}
ALL = [g["name"] for g in GAMES]


def not_for(game: str) -> dict[str, str]:
    """The answer to a token used for a game it is not valid for."""
    return {"error": f"this token is not valid for game {game!r}"}


@pytest.fixture
def store(cfg) -> TokenStore:
    """The default config's token store."""
    return TokenStore.of_data_dir(cfg.data_dir)


def test_a_token_for_one_game_uploads_to_no_other(api: Api, store: TokenStore, stream: Stream):
    token = store.create("carol", ["upload"], games=["cartpole"])[1]
    refused = api.upload(token, episode(5, game="reacher"), game="reacher")
    assert refused.status_code == 403 and refused.json() == not_for("reacher")
    assert len(stream) == 0
    assert api.upload(token, episode(5)).status_code == 201
    assert len(stream) == 1


def test_the_protocol_s_direct_answers_check_the_game_too(cfg, store: TokenStore,
                                                          redis_url: str, stream: Stream,
                                                          monkeypatch):
    token = store.create("carol", ["upload"], games=["cartpole"])[1]
    live = Live(cfg, redis_url, monkeypatch)  # uvicorn with UploadProtocol on a real socket
    try:
        url = f"http://127.0.0.1:{live.port}/v1/games/%s/episodes"
        headers = {"Content-Type": "application/msgpack", **bearer(token)}
        with httpx.Client() as client:
            refused = client.post(url % "pixels", content=encode_body(episode(4, "pixels")),
                                  headers=headers)
            stored = client.post(url % "cartpole", content=encode_body(episode(4)),
                                 headers=headers)
        assert refused.status_code == 403 and refused.json() == not_for("pixels")
        assert stored.status_code == 201
        assert live.direct == [403, 201]  # both answered by Uploads.now
        assert len(stream) == 1
    finally:
        live.stop()


def test_a_download_token_for_one_game_gets_no_other_games_models(api: Api, cfg,
                                                                  store: TokenStore):
    models = ModelStore(cfg.path(cfg.gateway.models, "models"))
    models.publish("reacher", b"reacher model", INFO)
    token = store.create("viewer", ["download"], games=["cartpole"])[1]
    for path in ("/v1/games/reacher/model", "/v1/games/reacher/models/1"):
        response = api.request("GET", path, headers=bearer(token))
        assert response.status_code == 403 and response.json() == not_for("reacher"), path
    mine = api.request("GET", "/v1/games/cartpole/model", headers=bearer(token))
    assert mine.status_code == 404 and "no model" in mine.json()["error"]  # allowed, none yet


def test_the_game_list_shows_only_the_tokens_games(api: Api, store: TokenStore):
    token = store.create("viewer", ["download"], games=["pixels", "cartpole"])[1]
    listed = api.request("GET", "/v1/games", headers=bearer(token))
    assert listed.status_code == 200
    assert sorted(g["name"] for g in listed.json()["games"]) == ["cartpole", "pixels"]


def test_an_unknown_game_is_refused_like_a_forbidden_one(api: Api, store: TokenStore):
    token = store.create("probe", ["upload", "download"], games=["cartpole"])[1]
    for game in ("chess", "reacher"):  # one unknown, one configured: the same answer
        answers = [api.upload(token, episode(5), game=game),
                   api.request("GET", f"/v1/games/{game}/model", headers=bearer(token)),
                   api.request("GET", f"/v1/games/{game}/models/1", headers=bearer(token))]
        assert [(a.status_code, a.json()) for a in answers] == [(403, not_for(game))] * 3


def test_an_all_games_token_works_for_every_game(api: Api, store: TokenStore, stream: Stream):
    token = store.create("ops", ["upload", "download"], all_games=True)[1]
    for game in ALL:
        assert api.upload(token, episode(5, game=game), game=game).status_code == 201
        model = api.request("GET", f"/v1/games/{game}/model", headers=bearer(token))
        assert model.status_code == 404 and "no model" in model.json()["error"]
    listed = api.request("GET", "/v1/games", headers=bearer(token)).json()["games"]
    assert [g["name"] for g in listed] == ALL
    unknown = api.upload(token, episode(5), game="chess")
    assert unknown.status_code == 404 and unknown.json() == {"error": "unknown game"}
    assert len(stream) == len(ALL)


@pytest.mark.parametrize("games,all_games", [((), False), (["cartpole"], True),
                                             (["bad name"], False), ([""], False)])
def test_a_token_names_its_games_or_all_of_them(tmp_path: Path, games, all_games):
    with pytest.raises(TokenError, match="games" if all_games or not games else "game name"):
        TokenStore(tmp_path / "tokens.json").create("x", ["upload"], games=games,
                                                    all_games=all_games)


def test_tokens_cli_binds_tokens_to_declared_games(tmp_path: Path):
    config = tmp_path / "gateway.toml"
    config.write_text('[gateway]\ndata_dir = "data"\n' + "".join(
        f'[[gateway.games]]\nname = "{g}"\nobs_shape = [2]\naction_n = 2\n'
        for g in ("cartpole", "pong")))
    runner = CliRunner()
    create = ["tokens", "create", str(config), "--client", "alice", "--scope", "upload"]
    neither = runner.invoke(cli, create)
    assert neither.exit_code == 2
    assert "--game" in neither.output and "--all-games" in neither.output
    both = runner.invoke(cli, [*create, "--game", "pong", "--all-games"])
    assert both.exit_code == 2 and "--all-games" in both.output
    undeclared = runner.invoke(cli, [*create, "--game", "cartpole", "--game", "chess"])
    assert undeclared.exit_code == 2
    assert "chess" in undeclared.output and "cartpole, pong" in undeclared.output
    assert len(undeclared.output.strip().splitlines()) == 1
    assert not (tmp_path / "data" / "tokens.json").exists()  # nothing was created
    two = runner.invoke(cli, [*create, "--game", "pong", "--game", "cartpole"])
    every = runner.invoke(cli, [*create, "--all-games"])
    assert two.exit_code == 0 and every.exit_code == 0, two.output + every.output
    store = TokenStore(tmp_path / "data" / "tokens.json")
    bound, unbound = store.list()
    assert (bound.games, bound.all_games) == (("pong", "cartpole"), False)
    assert (unbound.games, unbound.all_games) == ((), True)
    listed = runner.invoke(cli, ["tokens", "list", str(config)], env={"COLUMNS": "200"})
    rows = {line.split()[1]: line for line in listed.stdout.splitlines() if "t_" in line}
    assert "games" in listed.stdout and "pong, cartpole" in rows[bound.token_id]
    assert " * " in rows[unbound.token_id]


def test_a_token_file_of_before_games_still_authenticates_for_all_games(
        cfg, redis_url: str, stream: Stream, caplog):
    token = "msa_issued-before-games"
    old = {"token_id": "t_0ld0ld00", "client": "legacy", "scopes": ["upload", "download"],
           "sha256": hash_token(token), "created_at": time.time() - 86400,
           "expires_at": None, "revoked": False}
    gone = {**old, "token_id": "t_g0neg0ne", "sha256": hash_token("msa_x"), "revoked": True}
    path = Path(cfg.data_dir) / "tokens.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"tokens": [old, gone]}))
    TokenStore(path).create("new", ["upload"], games=["cartpole"])  # rewrites the file
    with caplog.at_level(logging.WARNING):
        api = Api(cfg, redis_url)
    try:
        for game in ALL:
            assert api.upload(token, episode(5, game=game), game=game).status_code == 201
        assert len(stream) == len(ALL)
    finally:
        api.close()
    (warning,) = [r.getMessage() for r in caplog.records if "t_0ld0ld00" in r.getMessage()]
    assert "--game" in warning and "t_g0neg0ne" not in warning  # a revoked one needs nothing
    entry = next(e for e in TokenStore(path).list() if e.token_id == "t_0ld0ld00")
    assert entry.all_games and entry.games == ()


CREATOR = textwrap.dedent("""
    import sys
    from msagent.gateway.tokens import TokenStore
    store = TokenStore(sys.argv[1])
    sys.stdin.readline()  # imported and ready: create the token when told
    print(store.create("late", ["upload"], games=["cartpole"])[1], flush=True)
""")


def test_a_token_made_by_another_process_is_accepted_on_the_next_request(
        api: Api, tokens: dict, store: TokenStore, stream: Stream):
    creator = subprocess.Popen([sys.executable, "-c", CREATOR, str(store.path)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert api.upload(tokens["bob"], episode(5)).status_code == 201  # tokens just looked at
        creator.stdin.write("go\n")
        creator.stdin.flush()
        late = creator.stdout.readline().strip()
    finally:
        creator.communicate(timeout=30)
    assert late.startswith("msa_")
    assert api.upload(late, episode(5)).status_code == 201  # no wait for the next look
    assert len(stream) == 2


def test_a_flood_of_bad_tokens_reads_the_token_file_only_when_it_changed(
        api: Api, tokens: dict, store: TokenStore, monkeypatch):
    reads = []
    original = TokenStore._read
    monkeypatch.setattr(TokenStore, "_read", lambda self: reads.append(1) or original(self))
    assert api.upload(tokens["bob"], episode(5)).status_code == 201
    reads.clear()
    for i in range(50):
        assert api.upload(f"msa_bad-{i}", b"x").status_code == 401
    assert reads == []  # a stat each, no read: the file did not change
    fresh = store.create("fresh", ["upload"], games=["cartpole"])[1]  # creating reads it too
    reads.clear()
    assert api.upload(fresh, episode(5)).status_code == 201
    assert reads == [1]
