"""A learner on a GPU (``services.learner.device``): the device names, and (with CUDA) every
algorithm's update on the GPU equal to the same update on the CPU, acting that still answers
numpy on the CPU, and a checkpoint of a GPU learner that resumes on either device."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import NetworkConfig, Policy, PPOConfig
from msagent.policy.algorithms.impala import ALGORITHMS
from msagent.policy.devices import resolve_device
from msagent.rundir.state_codec import flatten_state, unflatten_state
from msagent.vocabulary import Fragment, ModelKey

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
OBS = gym.spaces.Box(-1.0, 1.0, (6,), np.float32)
CONFIG = PPOConfig(epochs=2, minibatches=2, seed=3, max_grad_norm=0.5)


def test_device_names_resolve_or_are_refused_naming_what_torch_sees() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if CUDA else "cpu")
    with pytest.raises(ConfigError, match="use 'cpu', 'cuda', 'cuda:N' or 'auto'"):
        resolve_device("gpu")
    count = torch.cuda.device_count() if CUDA else 0
    with pytest.raises(ConfigError, match=rf"'cuda:{count}', but torch sees {count} GPU\(s\).*"
                       r"services.learner.resources.num_gpus = 1"):
        resolve_device(f"cuda:{count}")


def test_a_cpu_policy_keeps_its_device_and_moving_it_there_changes_nothing() -> None:
    policy = Policy(OBS, gym.spaces.Discrete(3), seed=0)
    obs = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)
    before = policy.act(obs, deterministic=True)
    assert policy.to("cpu") is policy and policy.device.type == "cpu"
    np.testing.assert_array_equal(policy.act(obs, deterministic=True).actions, before.actions)


def spaces(kind: str) -> tuple[gym.Space, NetworkConfig]:
    """The action space and network of each case."""
    if kind == "box":
        return gym.spaces.Box(-1, 1, (2,), np.float32), NetworkConfig(hidden=(32,))
    if kind == "multi":
        return gym.spaces.MultiDiscrete([3, 2]), NetworkConfig(hidden=(32,))
    if kind == "lstm":
        return gym.spaces.Discrete(3), NetworkConfig(hidden=(32,), lstm=16)
    return gym.spaces.Discrete(3), NetworkConfig(hidden=(32, 32))


def fragments(kind: str, n: int = 4, t_len: int = 8) -> list[Fragment]:
    """``n`` fragments acted (with masks, for Discrete) by a CPU policy on random inputs."""
    action_space, network = spaces(kind)
    policy = Policy(OBS, action_space, network, seed=0)
    rng, out = np.random.default_rng(1), []
    for i in range(n):
        obs = rng.uniform(-1, 1, (t_len, 6)).astype(np.float32)
        mask = None
        if kind == "discrete":
            mask = np.ones((t_len, 3), bool)
            mask[np.arange(t_len), rng.integers(0, 3, t_len)] = False
        acted = policy.act(obs, mask, state=policy.initial_state(t_len))
        out.append(Fragment(
            obs=obs, actions=acted.actions, logp=acted.logp, values=acted.values,
            rewards=rng.standard_normal(t_len).astype(np.float32),
            terminated=np.arange(t_len) == 5, truncated=np.zeros(t_len, bool),
            final_values=np.zeros(t_len, np.float32), bootstrap_value=0.5,
            policy=ModelKey("main", 0), action_mask=mask,
            initial_state=None if kind != "lstm" else np.zeros(policy.state_size, np.float32)))
    return out


def algorithm(name: str, kind: str, device: str):
    """A fresh algorithm over the same initial network, on ``device``."""
    action_space, network = spaces(kind)
    return ALGORITHMS[name](Policy(OBS, action_space, network, seed=7).to(device), CONFIG)


@needs_cuda
@pytest.mark.parametrize(("name", "kind"), [("ppo", "discrete"), ("ppo", "box"), ("ppo", "lstm"),
                                            ("ppo", "multi"), ("impala", "discrete"),
                                            ("bc", "discrete")])
def test_an_update_on_the_gpu_equals_the_same_update_on_the_cpu(name: str, kind: str) -> None:
    data = fragments(kind)
    on_cpu, on_gpu = algorithm(name, kind, "cpu"), algorithm(name, kind, "cuda")
    stats_cpu, stats_gpu = on_cpu.update(data), on_gpu.update(copy.deepcopy(data))
    assert on_gpu.policy.device.type == "cuda"
    assert all(p.is_cuda for p in on_gpu.policy.model.parameters())
    atol = 1e-4 if kind == "lstm" else 2e-5  # cuDNN's LSTM sums in another order
    for key, value in on_cpu.policy.get_weights().items():
        np.testing.assert_allclose(on_gpu.policy.get_weights()[key], value, atol=atol,
                                   err_msg=key)
    for key, value in stats_cpu.items():
        assert stats_gpu[key] == pytest.approx(value, rel=1e-3, abs=1e-5, nan_ok=True), key


@needs_cuda
def test_a_gpu_policy_acts_and_evaluates_from_numpy_on_the_cpu() -> None:
    cpu = Policy(OBS, gym.spaces.Discrete(3), seed=4)
    gpu = Policy(OBS, gym.spaces.Discrete(3), seed=4).to("cuda")
    obs = np.random.default_rng(2).normal(size=(16, 6)).astype(np.float32)
    mask = np.ones((16, 3), bool)
    mask[:, 0] = False
    out = gpu.act(obs, mask, deterministic=True)
    assert isinstance(out.actions, np.ndarray) and (out.actions != 0).all()
    np.testing.assert_array_equal(out.actions, cpu.act(obs, mask, deterministic=True).actions)
    np.testing.assert_allclose(out.values, cpu.act(obs, mask).values, atol=1e-5)
    logp, _, values = gpu.evaluate(obs, out.actions, mask)
    assert logp.is_cuda and values.is_cuda
    np.testing.assert_allclose(gpu.action_probs(obs, mask), cpu.action_probs(obs, mask),
                               atol=1e-6)


@needs_cuda
def test_a_gpu_learner_s_checkpoint_resumes_on_the_gpu_and_on_the_cpu() -> None:
    data = fragments("discrete")
    trained = algorithm("ppo", "discrete", "cuda")
    trained.update(data)
    tensors, skeleton = flatten_state({"policy": trained.policy.get_weights(),
                                       "ppo": trained.state_dict()})
    assert all(isinstance(a, np.ndarray) for a in tensors.values())
    after = {}
    for device in ("cuda", "cpu"):
        resumed = algorithm("ppo", "discrete", device)
        state = unflatten_state(tensors, skeleton)
        resumed.policy.set_weights(state["policy"])
        resumed.load_state_dict(state["ppo"])
        resumed.update(copy.deepcopy(data))
        after[device] = resumed.policy.get_weights()
    trained.update(copy.deepcopy(data))
    for key, value in trained.policy.get_weights().items():
        np.testing.assert_allclose(after["cuda"][key], value, atol=1e-6, err_msg=key)
        np.testing.assert_allclose(after["cpu"][key], value, atol=2e-5, err_msg=key)


@needs_cuda
def test_a_gpu_group_reduces_cuda_gradients_over_nccl_and_cpu_flags_over_gloo() -> None:
    import torch.distributed as dist

    from msagent.policy.algorithms.collective import TorchCollective
    from msagent.services.learner.group import free_port, group_backend

    dist.init_process_group(group_backend(True), init_method=f"tcp://127.0.0.1:"
                            f"{free_port('127.0.0.1')}", rank=0, world_size=1)
    try:
        group = TorchCollective()
        grads = [torch.full((3,), 2.0, device="cuda"), torch.ones(2, 2, device="cuda")]
        group.average(grads)
        assert grads[0].is_cuda and float(grads[0].sum()) == 6.0
        assert group.any(True) and not group.any(False)
        assert float(group.sum(torch.ones(4, device="cuda")).sum()) == 4.0
    finally:
        dist.destroy_process_group()
