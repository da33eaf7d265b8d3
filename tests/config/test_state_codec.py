"""flatten_state / unflatten_state round-trip real optimizer state bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from msagent.rundir import RunDir, flatten_state, unflatten_state


def _trained_adam(seed: int = 0) -> tuple[torch.nn.Module, torch.optim.Adam]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99), fused=True)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(16, 4)).pow(2).mean().backward()
        opt.step()
    return model, opt


def _assert_same(a: object, b: object) -> None:
    assert type(a) is type(b)
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.numpy().tobytes() == b.numpy().tobytes()
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        assert a == b


def test_adam_state_round_trips_bit_exactly_through_a_checkpoint(tmp_path: Path) -> None:
    _, opt = _trained_adam()
    original = opt.state_dict()
    tensors, skeleton = flatten_state(original, prefix="optimizer")
    run = RunDir.create(tmp_path, "exp")
    run.save_checkpoint(3, tensors, {"optimizer": skeleton, "updates": 3})
    _, loaded_tensors, state = run.latest_checkpoint()
    restored = unflatten_state(loaded_tensors, state["optimizer"])
    _assert_same(original, restored)
    assert isinstance(next(iter(restored["state"])), int)  # int keys survive JSON
    assert restored["param_groups"][0]["betas"] == (0.9, 0.99)


def test_restored_adam_continues_identically() -> None:
    model_a, opt_a = _trained_adam()
    model_b, opt_b = _trained_adam(seed=1)
    model_b.load_state_dict(model_a.state_dict())
    tensors, skeleton = flatten_state(opt_a.state_dict())
    opt_b.load_state_dict(unflatten_state(tensors, json.loads(json.dumps(skeleton))))
    x = torch.randn(16, 4)
    for model, opt in ((model_a, opt_a), (model_b, opt_b)):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    for p, q in zip(model_a.parameters(), model_b.parameters(), strict=True):
        assert torch.equal(p, q)


def test_dtypes_numpy_lacks_and_numpy_values_round_trip() -> None:
    nested = {
        "bf16": torch.tensor([1.5, -2.25, float("nan")], dtype=torch.bfloat16),
        "rng": torch.Generator().manual_seed(3).get_state(),
        "arr": np.arange(6, dtype=np.uint16).reshape(2, 3),
        "scalar": np.float32(0.1),
        (1, "a"): [None, True, 2, 3.5, "s", float("inf")],
    }
    tensors, skeleton = flatten_state(nested)
    assert all(isinstance(v, np.ndarray) for v in tensors.values())
    restored = unflatten_state(tensors, json.loads(json.dumps(skeleton)))
    assert restored["bf16"].dtype == torch.bfloat16
    assert restored["bf16"].view(torch.int16).tolist() == nested["bf16"].view(torch.int16).tolist()
    assert torch.equal(restored["rng"], nested["rng"])
    np.testing.assert_array_equal(restored["arr"], nested["arr"])
    assert restored["arr"].dtype == np.uint16
    assert restored["scalar"] == np.float32(0.1) and restored["scalar"].dtype == np.float32
    assert restored[(1, "a")] == nested[(1, "a")]


def test_unsupported_values_are_refused_by_path() -> None:
    with pytest.raises(TypeError, match=r"cannot checkpoint object at 'a/0'"):
        flatten_state({"a": [object()]})
