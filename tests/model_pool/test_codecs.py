"""Weights and metadata survive encoding bit for bit, and bad input is refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from pool_samples import assert_bit_exact, sample_weights

from msagent.model_pool import InvalidMetadataError, InvalidWeightsError
from msagent.model_pool.metadata_codec import decode_metadata, encode_metadata
from msagent.model_pool.weights_codec import decode_weights, encode_weights


def test_weights_round_trip_bit_exact() -> None:
    """Learners must get back exactly the parameters they pushed."""
    weights = sample_weights()
    assert_bit_exact(decode_weights(encode_weights(weights)), weights)


def test_transposed_and_big_endian_arrays_keep_their_values() -> None:
    """safetensors stores raw memory, so views and byte orders must be normalised first."""
    transposed = np.arange(6, dtype=np.float32).reshape(2, 3).T
    big_endian = np.arange(4, dtype=">i8")
    got = decode_weights(encode_weights({"t": transposed, "be": big_endian}))
    np.testing.assert_array_equal(got["t"], transposed)
    np.testing.assert_array_equal(got["be"], big_endian)
    assert got["be"].dtype == np.dtype("<i8")


def test_decoded_arrays_are_writable_copies() -> None:
    """A consumer editing its arrays must not change what others decode."""
    blob = encode_weights({"w": np.zeros(3, dtype=np.float32)})
    first = decode_weights(blob)
    first["w"][0] = 1.0
    assert decode_weights(blob)["w"][0] == 0.0


@pytest.mark.parametrize(
    ("weights", "fragment"),
    [
        ({"fc.bias": [1.0, 2.0]}, "weights['fc.bias'] is a builtins.list"),
        ({"w": np.zeros(2), "fc.bias": 3.0}, "weights['fc.bias'] is a builtins.float"),
        ({"names": np.array(["a", "b"])}, "weights['names'] has dtype <U1"),
        ({"objs": np.array([None], dtype=object)}, "weights['objs'] has dtype object"),
        ({"__metadata__": np.zeros(1)}, "'__metadata__' is reserved"),
        ({1: np.zeros(1)}, "weight names must be str"),
        ([np.zeros(1)], "weights must be a dict"),
    ],
)
def test_bad_weights_are_refused_by_name(weights: object, fragment: str) -> None:
    """A wrong entry must be named, so the caller can find it among hundreds."""
    with pytest.raises(InvalidWeightsError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        encode_weights(weights)  # type: ignore[arg-type]


def test_metadata_round_trip_exact() -> None:
    """Plain metadata must come back equal, types included."""
    metadata = {"step": 2**40, "loss": 0.1 + 0.2, "name": "héllo", "raw": b"\x00\xff", "none": None,
                "flags": [True, False], "nested": {"a": [1, {"b": -1.5}]}, "inf": float("-inf")}
    assert decode_metadata(encode_metadata(metadata)) == metadata


def test_numpy_scalars_in_metadata_become_python_numbers() -> None:
    """Learners report numpy scalars; they must be stored as plain numbers."""
    got = decode_metadata(encode_metadata({"loss": np.float32(0.5), "step": np.int64(7), "ok": np.bool_(True)}))
    assert got == {"loss": 0.5, "step": 7, "ok": True}
    assert type(got["step"]) is int and type(got["ok"]) is bool


@pytest.mark.parametrize(
    "metadata",
    [{"array": np.zeros(2)}, {"obj": object()}, {1: "int key"}, {"big": 2**70}, ["not", "a", "dict"]],
)
def test_non_plain_metadata_is_refused(metadata: object) -> None:
    """Only plain values are stored, so decoding never builds objects."""
    with pytest.raises(InvalidMetadataError):
        encode_metadata(metadata)  # type: ignore[arg-type]
