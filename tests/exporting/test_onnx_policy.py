"""OnnxPolicy: a game client acts like the PyTorch policy, with onnxruntime and no torch."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from msagent.client.onnx_policy import OnnxPolicy
from msagent.exporting.onnx_export import export_onnx, manifest_info
from tests.exporting.helpers import Case, greedy, legal, make_case, torch_logp

ATOL = 1e-5


@pytest.fixture(scope="module", params=["cartpole", "masked_mlp", "pendulum", "multi_discrete",
                                        "tictactoe_cnn"])
def client(request: pytest.FixtureRequest) -> tuple[Case, OnnxPolicy]:
    """A policy of each head and its exported graph loaded by the client."""
    found = make_case(request.param)
    onnx_bytes = export_onnx(found.policy, found.masked, found.obs_dtype)
    manifest = {**manifest_info(found.policy, onnx_bytes, {}),
                "sha256": hashlib.sha256(onnx_bytes).hexdigest()}
    return found, OnnxPolicy(onnx_bytes, manifest)


def test_importing_the_client_does_not_import_torch() -> None:
    code = ("import sys, msagent.client, msagent.client.onnx_policy, msagent.exporting.model_store\n"
            "bad = [m for m in ('torch', 'ray') if m in sys.modules]\n"
            "assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_sampled_log_probs_equal_the_pytorch_policy(client: tuple[Case, OnnxPolicy]) -> None:
    found, policy = client
    obs, mask = found.feeds["obs"], found.feeds.get("action_mask")
    actions, logp = policy.act(obs, mask, rng=0)
    np.testing.assert_allclose(logp, torch_logp(found.policy, obs, actions, mask), atol=ATOL)
    np.testing.assert_allclose(policy.log_prob(obs, actions, mask), logp, atol=1e-6)
    if mask is not None:
        assert legal(mask, actions, policy.nvec), "an illegal action was sampled"


def test_greedy_actions_are_the_argmax_and_the_policy_s(client: tuple[Case, OnnxPolicy]) -> None:
    found, policy = client
    obs, mask = found.feeds["obs"], found.feeds.get("action_mask")
    actions, logp = policy.act(obs, mask, greedy=True)
    out = policy.outputs(np.asarray(obs, policy.obs_dtype), mask)
    acted = found.policy.act(obs, mask, deterministic=True)
    if policy.continuous:
        np.testing.assert_array_equal(actions, out["mean"])
        np.testing.assert_allclose(actions, acted.actions, atol=ATOL)
    else:
        logits = out["logits"] if mask is None else np.where(mask, out["logits"], -1e9)
        np.testing.assert_array_equal(actions, greedy(logits, policy.nvec))
        np.testing.assert_array_equal(actions, acted.actions)
    np.testing.assert_allclose(logp, acted.logp, atol=ATOL)


def test_values_equal_the_pytorch_policy(client: tuple[Case, OnnxPolicy]) -> None:
    found, policy = client
    obs = found.feeds["obs"]
    np.testing.assert_allclose(policy.value(obs), found.policy.act(obs).values, atol=ATOL)


def test_one_observation_gives_unbatched_results(client: tuple[Case, OnnxPolicy]) -> None:
    found, policy = client
    obs, mask = found.feeds["obs"], found.feeds.get("action_mask")
    one_mask = None if mask is None else mask[0]
    action, logp = policy.act(obs[0], one_mask, greedy=True)
    batch_actions, batch_logp = policy.act(obs[:1], None if mask is None else mask[:1],
                                           greedy=True)
    assert np.shape(logp) == () and np.shape(policy.value(obs[0])) == ()
    np.testing.assert_array_equal(action, batch_actions[0])
    assert logp == pytest.approx(float(batch_logp[0]), abs=1e-6)
    with pytest.raises(ValueError, match="observation shape"):
        policy.act(np.zeros((2, 3, 99), np.float32))


def test_sampling_follows_the_policy_s_probabilities() -> None:
    found = make_case("masked_mlp")
    policy = OnnxPolicy(export_onnx(found.policy, True))
    obs = np.repeat(found.feeds["obs"][:1], 20_000, axis=0)
    mask = np.repeat(np.array([[True, False, True, True, False, True]]), 20_000, axis=0)
    actions, _ = policy.act(obs, mask, rng=np.random.default_rng(5))
    probs = found.policy.action_probs(obs[:1], mask[:1])[0]
    freq = np.bincount(actions, minlength=6) / len(actions)
    np.testing.assert_allclose(freq, probs, atol=0.015)
    assert freq[1] == 0 and freq[4] == 0
    assert np.array_equal(policy.act(obs[:50], mask[:50], rng=1)[0],
                          policy.act(obs[:50], mask[:50], rng=1)[0])


def test_gaussian_sampling_and_clipping() -> None:
    found = make_case("pendulum")
    onnx_bytes = export_onnx(found.policy)
    policy = OnnxPolicy(onnx_bytes, manifest_info(found.policy, onnx_bytes, {}))
    obs = np.repeat(found.feeds["obs"][:1], 20_000, axis=0)
    actions, _ = policy.act(obs, rng=3)
    mean = policy.outputs(obs[:1])["mean"][0]
    assert actions.mean(0) == pytest.approx(mean, abs=0.02)
    assert actions.std(0) == pytest.approx(np.exp(-0.5), rel=0.03)  # init_log_std -0.5
    clipped = policy.clip(np.array([[5.0], [-5.0], [0.5]], np.float32))
    np.testing.assert_array_equal(clipped[:, 0], [2.0, -2.0, 0.5])  # Pendulum's torque bounds


def test_a_file_path_and_a_wrong_checksum(tmp_path) -> None:
    found = make_case("cartpole")
    onnx_bytes = export_onnx(found.policy, False)
    (tmp_path / "m.onnx").write_bytes(onnx_bytes)
    policy = OnnxPolicy(tmp_path / "m.onnx")
    assert policy.obs_shape == (4,) and not policy.masked and not policy.continuous
    with pytest.raises(ValueError, match="sha256"):
        OnnxPolicy(onnx_bytes, {"sha256": "0" * 64})


def test_a_multi_discrete_graph_tells_the_client_its_components_without_a_manifest() -> None:
    found = make_case("multi_discrete")
    onnx_bytes = export_onnx(found.policy, found.masked, found.obs_dtype)
    policy = OnnxPolicy(onnx_bytes)  # no manifest: the graph's metadata says (3, 2, 4)
    assert policy.nvec == (3, 2, 4)
    actions, logp = policy.act(found.feeds["obs"], found.feeds["action_mask"], rng=3)
    assert actions.shape == (64, 3) and actions.dtype == np.int64
    assert all(((0 <= actions[:, i]) & (actions[:, i] < n)).all() for i, n in enumerate((3, 2, 4)))
    assert OnnxPolicy(export_onnx(make_case("masked_mlp").policy, True)).nvec is None
