"""Upload bodies for the hostile-client benchmark: valid episodes of the benchmark's games
built with plain numpy (not msagent's encoder, so the bodies do not inherit its assumptions),
and a mutation engine that changes one thing of a valid body at random (a type, a shape, a
dtype, a value out of range, NaN, a bool where an int goes, an extra or missing key, ...) or
sometimes nothing.

Whether a mutated body is still valid is never decided here: the reference check
(``hostile_reference``) reads the bytes actually sent.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

from hostile_reference import GAMES, Game

FLOAT_FIELDS = ("observations", "rewards", "log_probs")
ARRAY_FIELDS = ("observations", "actions", "rewards", "log_probs")
SCALAR_FIELDS = ("episode_id", "terminated", "truncated", "part", "client_version",
                 "model_version")
ODD_VALUES: list[Any] = [None, True, False, 0, 1, -1, 1.5, "", "x", b"b", [], {}, [[]],
                         2**64 - 1, -(2**63), 2**62, {"dtype": "<f4"}, [None], ["1"]]
"""Values of every msgpack type, put where another type belongs."""


def wire(array: np.ndarray) -> dict[str, Any]:
    """An array as the msgpack form's ``dtype``/``shape``/``data`` map."""
    array = np.ascontiguousarray(array)
    return {"dtype": array.dtype.str, "shape": list(array.shape), "data": array.tobytes()}


def episode(rng: random.Random, game: Game, episode_id: str, lists: bool) -> dict[str, Any]:
    """A valid upload body (arrays as nested lists when ``lists``, else dtype maps)."""
    steps = rng.choice([1, 2, 5, 17, 50, game.max_steps]) if rng.random() < 0.3 \
        else rng.randint(1, min(40, game.max_steps))
    gen = np.random.default_rng(rng.getrandbits(32))
    if game.obs_dtype == "uint8":
        obs = gen.integers(0, 256, (steps, *game.obs_shape)).astype(rng.choice(["u1", "<i4"]))
    else:
        obs = gen.normal(size=(steps, *game.obs_shape)).astype(rng.choice(["<f4", "<f8"]))
    arrays = {"observations": obs,
              "actions": gen.integers(0, game.action_n, steps).astype(
                  rng.choice(["<i8", "<i4", "u1"])),
              "rewards": gen.normal(size=steps).astype(rng.choice(["<f4", "<f8", "<i8"])),
              "log_probs": -gen.exponential(size=steps).astype(np.float32)}
    body: dict[str, Any] = {"episode_id": episode_id, "terminated": rng.random() < 0.5,
                            "truncated": rng.random() < 0.3}
    for name, array in arrays.items():
        body[name] = array.tolist() if lists else wire(array)
    _optional_fields(rng, body)
    return body


def _optional_fields(rng: random.Random, body: dict[str, Any]) -> None:
    """Drop or set the optional fields at random (each way is valid)."""
    if rng.random() < 0.3:  # not sent, or sent as null
        body["log_probs"] = None
        if rng.random() < 0.5:
            del body["log_probs"]
    if rng.random() < 0.5:
        body["part"] = rng.choice([0, 1, 7, 1_000_000])
    if rng.random() < 0.5:
        body["client_version"] = rng.choice(["hostile/1.0", "", "x" * 64, "jeu vidéo 🎮"])
    if rng.random() < 0.5:
        body["model_version"] = rng.choice([None, 0, 3, 2**62])


def encode(body: Any, kind: str) -> bytes:
    """The body as msgpack or JSON bytes (in JSON, bytes become latin-1 text; NaN is
    written as ``NaN``, as Python's json does)."""
    if kind == "msgpack":
        return msgpack.packb(body, use_bin_type=True, unicode_errors="surrogatepass")
    return json.dumps(body, default=_json_default, skipkeys=True).encode()


def _json_default(value: Any) -> Any:
    """What JSON cannot hold, as close as it gets."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


def gzipped(data: bytes, rng: random.Random) -> bytes:
    """The bytes gzipped at a random level."""
    return gzip.compress(data, compresslevel=rng.choice([1, 6, 9]), mtime=0)


# ------------------------------------------------------------------------------ mutations


Mutation = Callable[[dict[str, Any], random.Random, Game], str]


def mutate(body: dict[str, Any], rng: random.Random, game: Game) -> str:
    """Change one thing of a valid body (or, one time in eight, nothing); what was done."""
    if rng.random() < 0.125:
        return "unchanged"
    mutation = rng.choice(MUTATIONS)
    return f"{mutation.__name__.lstrip('_')}: {mutation(body, rng, game)}"


def _drop_field(body: dict, rng: random.Random, game: Game) -> str:
    """A field removed (required or optional)."""
    name = rng.choice(sorted(body))
    del body[name]
    return name


def _extra_field(body: dict, rng: random.Random, game: Game) -> str:
    """A field the schema does not have."""
    name = rng.choice(["extra", "Episode_id", "rewards ", "__proto__", "", "x" * 80,
                       "observatіons", "rewards\x00", "format", "game", "client_id"])
    body[name] = rng.choice(ODD_VALUES)
    return repr(name)


def _retype(body: dict, rng: random.Random, game: Game) -> str:
    """A field given a value of another type."""
    name = rng.choice(sorted(body))
    body[name] = rng.choice(ODD_VALUES)
    return f"{name}={body[name]!r:.40}"


def _episode_id(body: dict, rng: random.Random, game: Game) -> str:
    """An episode id just inside or outside its pattern."""
    base = body["episode_id"]
    body["episode_id"] = rng.choice([
        "", "-" + base, "a" * 129, "a" * 128, base + "\n", base + "\r", base + " ", " " + base,
        "é" + base, base + "/x", base.replace("-", "\x00"), base + "\u2028", "ＡＢ" + base,
        ":" + base, 42, base + "\t", base.encode(), "a:b.c_d-" + base])
    return repr(body["episode_id"])[:60]


def _flags(body: dict, rng: random.Random, game: Game) -> str:
    """terminated/truncated as something else than a bool."""
    name = rng.choice(["terminated", "truncated"])
    body[name] = rng.choice([0, 1, "true", None, [True], 1.0, b"\x01"])
    return f"{name}={body[name]!r}"


def _scalar_range(body: dict, rng: random.Random, game: Game) -> str:
    """part/model_version/client_version at or past their bounds, or of a near type."""
    name = rng.choice(["part", "model_version", "client_version"])
    body[name] = rng.choice({
        "part": [-1, 1_000_000, 1_000_001, True, 1.0, "1", 2**63, None, 2**64 - 1],
        "model_version": [-1, 2**62, 2**62 + 1, 2**64 - 1, True, False, 1.5, "1", None],
        "client_version": ["x" * 64, "x" * 65, "\x00", "a\nb", "\u200b", "\u2028", "\x7f",
                           "émoji 🎮", b"bytes", 5, "\udc80" * 2, " ", "\t"]}[name])
    return f"{name}={body[name]!r:.40}"


def _length(body: dict, rng: random.Random, game: Game) -> str:
    """One array one step longer or shorter than the others."""
    name = rng.choice([n for n in ARRAY_FIELDS if body.get(n) is not None] or ["rewards"])
    array = _as_array(body.get(name))
    if array is None or array.shape[0] == 0:
        return "skipped"
    array = array[:-1] if rng.random() < 0.5 else np.concatenate([array, array[:1]])
    body[name] = _like(body[name], array)
    return f"{name} has {array.shape[0]} steps"


def _declared_shape(body: dict, rng: random.Random, game: Game) -> str:
    """A dtype map whose shape lies (its data unchanged)."""
    name, value = _wire_field(body, rng)
    if value is None:
        return "skipped"
    t = value["shape"][0]
    value["shape"] = rng.choice([
        [t, 4.0], [t, True], [-t], [*value["shape"], 1], [t * 4], [0, 2**62], [2**62, 0],
        ["T"], [1] * 9, "4", [], None, [2**64 - 1], [2**31] * 2, [t, 2**40],
        [True] * len(value["shape"]), [float(d) for d in value["shape"]]])
    return f"{name}.shape={value['shape']!r:.40}"


def _dtype(body: dict, rng: random.Random, game: Game) -> str:
    """A dtype map whose dtype changes (allowed or not; the data unchanged)."""
    name, value = _wire_field(body, rng)
    if value is None:
        return "skipped"
    value["dtype"] = rng.choice([">f4", "<f2", "float32", "|O", "<U1", "", 4, None, "<c8",
                                 "|b1", "<f4", "<f8", "<i8", "<i4", "|u1", "<u8", "|i1"])
    return f"{name}.dtype={value['dtype']!r}"


def _data(body: dict, rng: random.Random, game: Game) -> str:
    """A dtype map whose data is cut, padded or of another type."""
    name, value = _wire_field(body, rng)
    if value is None:
        return "skipped"
    data = value["data"]
    value["data"] = rng.choice([data[:-1], data + b"\x00", data.decode("latin-1"),
                                list(data[:8]), None, data * 2, b""])
    return f"{name}.data is {type(value['data']).__name__} of {len(value['data'] or [])}"


def _value(body: dict, rng: random.Random, game: Game) -> str:
    """One value out of range: NaN, infinities, beyond float32, an action past the space, a
    pixel past 255, a positive log-probability."""
    name = rng.choice([n for n in ARRAY_FIELDS if body.get(n) is not None] or ["rewards"])
    array = _as_array(body.get(name))
    if array is None or array.size == 0:
        return "skipped"
    values = ([game.action_n, -1, 2**31, 2**62, game.action_n - 1] if name == "actions" else
              [256, -1, 255, 0] if game.obs_dtype == "uint8" and name == "observations" else
              [0.5, 1e-3, 1e-4, 2e-4, -0.0, float("nan")] if name == "log_probs" else
              [float("nan"), float("inf"), -float("inf"), 1e39, -1e39, 3.4e38])
    value = rng.choice(values)
    dtype = np.float64 if isinstance(value, float) else np.int64
    if array.dtype.kind != np.dtype(dtype).kind or dtype is np.int64 or rng.random() < 0.3:
        array = array.astype(dtype)
    flat = array.reshape(-1).copy()
    with np.errstate(over="ignore"):  # 1e39 in a float32 array: infinite, on purpose
        flat[rng.randrange(flat.size)] = value
    body[name] = _like(body[name], flat.reshape(array.shape))
    return f"{name} holds {value!r} ({array.dtype})"


def _bool_for_int(body: dict, rng: random.Random, game: Game) -> str:
    """Booleans where numbers go: in the actions (a list item, or a |b1 dtype), the rewards,
    pixels, part or model_version."""
    choice = rng.randrange(5)
    if choice == 4 and isinstance(body.get("rewards"), list):
        body["rewards"][rng.randrange(len(body["rewards"]))] = rng.random() < 0.5
        return "a bool among the rewards"
    if choice == 0 and isinstance(body.get("actions"), list):
        body["actions"][rng.randrange(len(body["actions"]))] = rng.random() < 0.5
        return "a bool among the actions"
    if choice <= 1:
        actions = _as_array(body.get("actions"))
        if actions is None:
            return "skipped"
        body["actions"] = _like(body["actions"], (actions % 2).astype(bool))
        return "actions as booleans"
    if choice == 2 and game.obs_dtype == "uint8":
        obs = _as_array(body.get("observations"))
        if obs is not None:
            body["observations"] = _like(body["observations"], obs % 2 == 1)
            return "pixels as booleans"
    name = rng.choice(["part", "model_version"])
    body[name] = rng.random() < 0.5
    return f"{name}={body[name]}"


def _floats_for_ints(body: dict, rng: random.Random, game: Game) -> str:
    """Integral floats where integers go (actions, pixels)."""
    name = "observations" if game.obs_dtype == "uint8" and rng.random() < 0.5 else "actions"
    array = _as_array(body.get(name))
    if array is None:
        return "skipped"
    body[name] = _like(body[name], array.astype(rng.choice([np.float32, np.float64])))
    return f"{name} as floats"


def _form(body: dict, rng: random.Random, game: Game) -> str:
    """One array switched between its two forms (valid), made ragged, nested deeper, a
    scalar, or a list holding a string."""
    name = rng.choice([n for n in ARRAY_FIELDS if body.get(n) is not None] or ["rewards"])
    array = _as_array(body.get(name))
    if array is None:
        return "skipped"
    as_list = array.tolist()
    choice = rng.randrange(6)
    if choice == 2 and array.ndim > 1 and array.shape[0] > 1:
        as_list[-1] = as_list[-1][:-1]
    body[name] = [wire(array), as_list, as_list, [as_list], as_list[0] if as_list else 0,
                  [*as_list[:-1], "1"]][choice]
    return f"{name} form {choice}"


def _steps(body: dict, rng: random.Random, game: Game) -> str:
    """Every array with T steps: 0, max_steps (valid) or max_steps + 1."""
    steps = rng.choice([0, game.max_steps, game.max_steps + 1])
    for name in ARRAY_FIELDS:
        array = _as_array(body.get(name))
        if array is not None:
            reps = -(-steps // max(array.shape[0], 1))
            body[name] = _like(body[name], np.concatenate([array] * max(reps, 1))[:steps])
    return f"{steps} steps"


def _keys(body: dict, rng: random.Random, game: Game) -> str:
    """A key that is not a string (msgpack only), or a dtype map with a key more or less."""
    choice = rng.randrange(3)
    if choice == 0:
        body[rng.choice([1, b"rewards", 1.5, None])] = 1
        return "a non-string key"
    name, value = _wire_field(body, rng)
    if value is None:
        return "skipped"
    if choice == 1:
        value["order"] = "C"
        return f"{name} has an extra key"
    del value[rng.choice(["dtype", "shape", "data"])]
    return f"{name} lacks a key"


MUTATIONS: list[Mutation] = [
    _drop_field, _extra_field, _retype, _episode_id, _episode_id, _flags, _scalar_range,
    _scalar_range, _length, _declared_shape, _dtype, _data, _value, _value, _value,
    _bool_for_int, _bool_for_int, _floats_for_ints, _form, _steps, _keys]


def _wire_field(body: dict, rng: random.Random) -> tuple[str, dict | None]:
    """A field held as a dtype map (converted to one if it was a list)."""
    name = rng.choice([n for n in ARRAY_FIELDS if body.get(n) is not None] or ["rewards"])
    array = _as_array(body.get(name))
    if array is None:
        return name, None
    body[name] = wire(array)
    return name, body[name]


def _as_array(value: Any) -> np.ndarray | None:
    """The array a valid field holds (None when it holds something else already)."""
    if isinstance(value, dict) and set(value) == {"dtype", "shape", "data"}:
        try:
            return np.frombuffer(value["data"], np.dtype(value["dtype"])).reshape(
                value["shape"])
        except (TypeError, ValueError):
            return None
    if isinstance(value, list):
        try:
            array = np.array(value)
        except ValueError:
            return None
        return array if array.dtype.kind in "biuf" and array.ndim else None
    return None


def _like(previous: Any, array: np.ndarray) -> Any:
    """The array in the form the field had (a dtype map or lists)."""
    return wire(array) if isinstance(previous, dict) else array.tolist()


def valid_body(rng: random.Random, game_name: str, episode_id: str, kind: str) -> bytes:
    """The bytes of a valid upload (msgpack with dtype maps or lists, or JSON)."""
    game = GAMES[game_name]
    lists = kind == "json" or rng.random() < 0.2
    return encode(episode(rng, game, episode_id, lists), kind)


def mutated_body(rng: random.Random, game_name: str, episode_id: str,
                 kind: str) -> tuple[bytes, str]:
    """The bytes of a valid upload with one mutation, and the mutation."""
    game = GAMES[game_name]
    body = episode(rng, game, episode_id, lists=kind == "json" or rng.random() < 0.2)
    what = mutate(body, rng, game)
    return encode(body, kind), what
