"""``NetworkConfig(cnn=...)``: the named convolution stacks and the maps they end on."""

from __future__ import annotations

import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import NetworkConfig
from msagent.policy.networks import CNN


def _final_map(kind: str, size: int, channels: int = 4) -> tuple[int, ...]:
    """The shape of the last convolution's output on one ``size`` x ``size`` frame."""
    cnn = CNN((size, size, channels), 32, kind=kind)
    x = cnn._to_nchw(torch.zeros(1, size, size, channels, dtype=torch.uint8))
    return tuple(cnn.convs[:-1](x).shape[1:])  # before the Flatten


@pytest.mark.parametrize(("kind", "size", "expected"), [
    ("nature", 84, (64, 7, 7)),
    ("nature", 42, (64, 1, 1)),     # why "strided" exists
    ("strided", 42, (32, 3, 3)),
    ("strided", 84, (32, 6, 6)),
    ("grid", 7, (64, 7, 7)),
    ("auto", 84, (64, 7, 7)),
    ("auto", 7, (64, 7, 7)),
])
def test_each_stack_ends_on_the_map_its_layout_says(kind: str, size: int,
                                                    expected: tuple[int, ...]) -> None:
    assert _final_map(kind, size) == expected


def test_the_output_is_the_feature_width_whatever_the_stack() -> None:
    for kind in ("nature", "strided", "grid"):
        cnn = CNN((42, 42, 5), 96, kind=kind)
        assert cnn(torch.zeros(3, 42, 42, 5, dtype=torch.uint8)).shape == (3, 96)


def test_an_unknown_stack_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"unknown cnn 'resnet'.*'strided'"):
        NetworkConfig(cnn="resnet")
    with pytest.raises(ConfigError, match=r"unknown cnn 'resnet'"):
        CNN((42, 42, 4), 32, kind="resnet")
