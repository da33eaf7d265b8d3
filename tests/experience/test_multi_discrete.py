"""MultiDiscrete actions through the experience path: the schema accepts ``[T, K]`` integer
uploads and refuses anything else by name, the store keeps them as K int64s per row (and still
reads files written before), and training from stored episodes learns them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from experience_samples import DAY, assert_same, cartpole
from twin_target_env import NVEC, ROUNDS, draw_targets, one_hot

from msagent.errors import ConfigError
from msagent.experience.fragments import EpisodePlayback, check_actions_fit
from msagent.experience.records import EpisodeRecord, Provenance, RecordError
from msagent.experience.schema import GameSchema
from msagent.experience.steps_table import STEPS_FORMAT, Layout, steps_table
from msagent.experience.store import ExperienceStore, StoreError
from msagent.experience.stream_entry import checked_record
from msagent.policy import NetworkConfig, Policy, PPOConfig
from msagent.policy.algorithms.bc import BehaviourCloning
from msagent.policy.algorithms.impala import IMPALA
from msagent.policy.spaces import ActionSpec
from msagent.vocabulary import ModelKey

TWIN = GameSchema(name="twin", obs_shape=(sum(NVEC),), action_nvec=NVEC, max_steps=100)
PROV = Provenance("c0", DAY)
UNIFORM_LOGP = float(-np.log(np.prod(NVEC)))
"""A uniformly random answer's log-probability: the sum of its components' (1/3 and 1/2)."""


def upload(rng: np.random.Generator, steps: int = ROUNDS, expert: bool = True,
           **changes: object) -> dict:
    """An upload body of the twin game as JSON would bring it (nested lists): the expert's
    answers (the targets) or uniformly random ones, rewarded a point per matching part."""
    targets = draw_targets(rng, steps)
    actions = targets if expert else draw_targets(rng, steps)
    body = {"episode_id": uuid.uuid4().hex, "observations": one_hot(targets).tolist(),
            "actions": actions.tolist(),
            "rewards": (actions == targets).sum(1).astype(float).tolist(),
            "log_probs": [0.0 if expert else UNIFORM_LOGP] * steps,
            "terminated": True, "truncated": False}
    return {**body, **changes}


def twin_records(n: int, seed: int, expert: bool = True) -> list[EpisodeRecord]:
    """``n`` checked records of the twin game, received a second apart."""
    rng = np.random.default_rng(seed)
    return [TWIN.validate_upload(upload(rng, expert=expert), Provenance("c0", DAY + i))
            for i in range(n)]


# ------------------------------------------------------------------------------------------
# The schema
# ------------------------------------------------------------------------------------------

def test_a_multi_discrete_upload_is_accepted_and_round_trips_through_the_stream_form():
    body = upload(np.random.default_rng(0), steps=5)
    record = TWIN.validate_upload(body, PROV)
    assert record.actions.dtype == np.int64 and record.actions.shape == (5, 2)
    np.testing.assert_array_equal(record.actions, body["actions"])
    assert record.action_nvec == NVEC
    again = checked_record(record.to_msgpack(), {"twin": TWIN})  # what the consumer reads
    assert_same(again, record)
    assert again.action_nvec == NVEC
    assert TWIN.model_dump(mode="json")["action_nvec"] == [3, 2]  # GET /v1/games shows it


@pytest.mark.parametrize("actions, reason", [
    ([[0, 1], [2, 0], [1, 2]], r"step 2, component 1: 2 is outside 0\.\.1 "
                               r"\(MultiDiscrete\(\[3, 2\]\)\)"),
    ([[0, 1], [3, 0], [1, 1]], r"step 1, component 0: 3 is outside 0\.\.2"),
    ([[0, 1], [-1, 0], [1, 1]], r"step 1, component 0: -1 is outside 0\.\.2"),
    ([0, 1, 2], r"actions: expected shape \[3, 2\], got \[3\]"),
    ([[0, 1, 0], [1, 0, 0], [1, 1, 0]], r"actions: expected shape \[3, 2\], got \[3, 3\]"),
    ([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]], "actions: expected integers, got dtype float64"),
    ([[True, False], [True, True], [False, False]],
     r"actions: lists must be rectangular and hold only numbers \(not booleans\)"),
])
def test_multi_discrete_actions_outside_the_space_are_refused_by_name(actions, reason):
    body = upload(np.random.default_rng(1), steps=3, actions=actions)
    with pytest.raises(RecordError, match=reason):
        TWIN.validate_upload(body, PROV)


def test_a_positive_log_prob_of_a_multi_discrete_action_is_refused():
    body = upload(np.random.default_rng(2), steps=3, log_probs=[-1.0, 0.5, -2.0])
    with pytest.raises(RecordError, match="log_probs: 0.5 is above 0"):
        TWIN.validate_upload(body, PROV)


@pytest.mark.parametrize("fields, declared", [
    ({"action_n": 6, "action_nvec": (3, 2)}, "action_n, action_nvec"),
    ({"action_nvec": (3, 2), "action_shape": (2,)}, "action_nvec, action_shape"),
    ({"action_n": 2, "action_shape": (2,)}, "action_n, action_shape"),
    ({"action_n": 2, "action_nvec": (2,), "action_shape": (2,)},
     "action_n, action_nvec, action_shape"),
    ({}, "none"),
])
def test_a_schema_must_declare_exactly_one_action_space(fields, declared):
    with pytest.raises(ValueError, match=r"declare exactly one of action_n \(Discrete\), "
                                         r"action_nvec \(MultiDiscrete\) and action_shape "
                                         rf"\(Box\); got {declared}"):
        GameSchema(name="g", obs_shape=(3,), **fields)


@pytest.mark.parametrize("nvec, reason", [
    ((3, 0), r"action_nvec must be positive integers .*got \[3, 0\]"),
    ((), "at least 1 item"), (tuple([2] * 65), "at most 64 items")])
def test_a_schema_refuses_components_without_choices_and_too_many_components(nvec, reason):
    with pytest.raises(ValueError, match=reason):
        GameSchema(name="g", obs_shape=(3,), action_nvec=nvec)


def test_the_schema_of_a_multi_discrete_env_and_of_spaces_uploads_cannot_carry():
    obs = gym.spaces.Box(0.0, 1.0, (5,), np.float32)
    schema = GameSchema.from_spaces("twin", obs, gym.spaces.MultiDiscrete([3, 2]))
    assert schema.action_nvec == (3, 2) and schema.action_n is None
    assert schema.action_shape is None
    for space in (gym.spaces.MultiDiscrete([[3, 2], [2, 2]]),
                  gym.spaces.MultiDiscrete([3, 2], start=[1, 0])):
        with pytest.raises(RecordError, match=r"game 'twin': action space MultiDiscrete.*"
                                              r"must be 1-d and start at 0"):
            GameSchema.from_spaces("twin", obs, space)


# ------------------------------------------------------------------------------------------
# The store
# ------------------------------------------------------------------------------------------

def test_multi_discrete_records_are_stored_as_int64_lists_and_read_back_equal(tmp_path):
    store = ExperienceStore(str(tmp_path / "exp"))
    records = twin_records(5, seed=3)
    records[1].log_probs = None
    written = store.write(records[2:]) + store.write(records[:2])
    got = store.episodes("twin")
    assert len(got) == 5
    for record, want in zip(got, records):
        assert_same(record, want)
        assert record.actions.dtype == np.int64 and record.actions.shape == (ROUNDS, 2)
        assert record.action_nvec == NVEC
    schema = pq.read_schema(written[0], filesystem=store.fs)
    assert schema.field("action").type == pa.list_(pa.int64(), 2)
    assert schema.metadata[b"msagent.action_nvec"] == b"[3, 2]"
    assert schema.metadata[b"msagent.action_shape"] == b"[2]"


def test_a_discrete_file_written_before_multi_discrete_actions_still_reads(tmp_path):
    store = ExperienceStore(str(tmp_path / "exp"))
    records = [cartpole(i) for i in range(3)]
    old_metadata = {b"msagent.format": STEPS_FORMAT.encode(), b"msagent.obs_shape": b"[4]",
                    b"msagent.obs_dtype": b"float32", b"msagent.action_shape": b"null"}
    table = steps_table(records).replace_schema_metadata(old_metadata)  # the old layout
    folder = tmp_path / "exp" / "game=cartpole" / "date=2024-01-01"
    folder.mkdir(parents=True)
    pq.write_table(table, str(folder / "part-old.parquet"))
    store.write([cartpole(3)])  # a new file beside it
    got = store.episodes("cartpole")
    assert len(got) == 4
    for record, want in zip(got, records + [cartpole(3)]):
        assert_same(record, want)
        assert record.action_nvec is None and record.actions.shape == (7,)


def test_files_of_other_choices_per_component_are_different_layouts(tmp_path):
    store = ExperienceStore(str(tmp_path / "exp"))
    store.write(twin_records(2, seed=4))
    other = GameSchema(name="twin", obs_shape=(5,), action_nvec=(3, 3))
    store.write([other.validate_upload(upload(np.random.default_rng(5)),
                                       Provenance("c0", DAY + 9))])
    with pytest.raises(StoreError, match="different layouts"):
        store.episodes("twin")


def test_metadata_declaring_choices_over_a_discrete_column_is_refused(tmp_path):
    store = ExperienceStore(str(tmp_path / "exp"))
    lying = Layout((4,), "float32", (2,), (3, 2)).metadata()
    folder = tmp_path / "exp" / "game=cartpole" / "date=2024-01-01"
    folder.mkdir(parents=True)
    pq.write_table(steps_table([cartpole(0)]).replace_schema_metadata(lying),
                   str(folder / "part-x.parquet"))
    with pytest.raises(StoreError, match=r"column action is int64, but the metadata declares "
                                         r"MultiDiscrete\(\[3, 2\]\) actions"):
        store.episodes("cartpole")


def test_a_record_whose_actions_do_not_match_its_choices_is_not_stored(tmp_path):
    record = twin_records(1, seed=6)[0]
    record.actions = record.actions.astype(np.float32)
    with pytest.raises(StoreError, match=r"declares MultiDiscrete\(\[3, 2\]\) actions but "
                                         r"holds float32 actions of shape \[16, 2\]"):
        ExperienceStore(str(tmp_path / "exp")).write([record])


# ------------------------------------------------------------------------------------------
# Training from stored episodes
# ------------------------------------------------------------------------------------------

@pytest.fixture
def one_thread() -> Iterator[None]:
    """One torch thread: two cores shared with other work make more threads crawl."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def stored(tmp_path, records: list[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records after a trip through the store (what a store reader plays back)."""
    store = ExperienceStore(str(tmp_path / "exp"))
    store.write(records)
    return store.episodes("twin")


def twin_policy(seed: int) -> Policy:
    """A small policy acting in the twin game's spaces."""
    return Policy(gym.spaces.Box(0.0, 1.0, (5,), np.float32), ActionSpec.multi_discrete(NVEC),
                  NetworkConfig(hidden=(32,)), seed=seed)


def greedy_match(policy: Policy, seed: int, n: int = 1000) -> float:
    """How often the policy's most likely answer matches both parts of a fresh target."""
    targets = draw_targets(np.random.default_rng(seed), n)
    actions = policy.act(one_hot(targets), deterministic=True, values=False).actions
    return float((actions == targets).all(1).mean())


def train(algorithm, records: list[EpisodeRecord], updates: int, need_log_probs: bool) -> dict:
    """``updates`` updates on fragments played back from the records; the last statistics."""
    policy = algorithm.policy
    playback = EpisodePlayback(streams=8, fragment_len=16, seed=0,
                               need_log_probs=need_log_probs)
    for version in range(updates):
        fragments = playback.fragments(records, lambda obs: policy.act(obs).values,
                                       ModelKey("main", version))
        assert fragments[0].actions.shape == (16, 2)
        stats = algorithm.update(fragments)
    return stats


def test_cloning_stored_multi_discrete_episodes_of_an_expert_learns_its_answers(
        tmp_path, one_thread):
    records = stored(tmp_path, twin_records(48, seed=7, expert=True))
    policy = twin_policy(seed=0)
    assert greedy_match(policy, seed=100) < 0.5
    bc = BehaviourCloning(policy, PPOConfig(epochs=4, minibatches=4, lr=3e-3, ent_coef=0.0))
    stats = train(bc, records, updates=25, need_log_probs=False)
    assert stats["losses/action_match"] > 0.95
    assert greedy_match(policy, seed=100) > 0.95


def test_vtrace_on_stored_random_multi_discrete_play_learns_the_rewarded_answers(
        tmp_path, one_thread):
    # the behaviour answered uniformly at random (log-prob: the sum of its components'), and
    # each matching part scored a point: V-trace corrects for it and finds the answers
    records = stored(tmp_path, twin_records(48, seed=8, expert=False))
    assert records[0].log_probs is not None
    policy = twin_policy(seed=1)
    impala = IMPALA(policy, PPOConfig(epochs=1, minibatches=1, lr=3e-3, gamma=0.5))
    stats = train(impala, records, updates=60, need_log_probs=True)
    assert all(np.isfinite(v) for v in stats.values())
    assert greedy_match(policy, seed=101) > 0.95


def test_uploaded_log_probs_of_the_learners_own_answers_are_on_policy_for_vtrace(
        tmp_path, one_thread):
    # a client uploads the summed log-probability of the components it sampled: stored and
    # played back, the learner's policy gives the same one (importance ratio 1, no clipping)
    policy, rng, records = twin_policy(seed=2), np.random.default_rng(11), []
    for i in range(8):
        obs = one_hot(draw_targets(rng, ROUNDS))
        acted = policy.act(obs)
        body = upload(rng, observations=obs.tolist(), actions=acted.actions.tolist(),
                      log_probs=acted.logp.tolist())
        records.append(TWIN.validate_upload(body, Provenance("c0", DAY + i)))
    impala = IMPALA(policy, PPOConfig(epochs=1, minibatches=1, lr=3e-3))
    stats = train(impala, stored(tmp_path, records), updates=1, need_log_probs=True)
    assert abs(stats["losses/approx_kl"]) < 1e-5 and stats["losses/clipfrac"] == 0.0


def test_stored_actions_the_policy_does_not_act_in_are_refused_with_the_fix():
    records = twin_records(2, seed=9)
    check_actions_fit(records, ActionSpec.multi_discrete(NVEC), "twin")
    for spec, words in [(ActionSpec.discrete(6), r"Discrete\(6\)"),
                        (ActionSpec.multi_discrete((3, 3)), r"MultiDiscrete\(\[3, 3\]\)"),
                        (ActionSpec.box(2, -1, 1), r"Box\(\[2\]\)")]:
        with pytest.raises(ConfigError, match=r"game 'twin' holds actions in MultiDiscrete"
                                              rf"\(\[3, 2\]\), but the policy of the env "
                                              rf"script acts in {words}: the env script"):
            check_actions_fit(records, spec, "twin")
    with pytest.raises(ConfigError, match=r"holds actions in Discrete up to 1, .* Discrete\(1\)"):
        check_actions_fit([cartpole(0)], ActionSpec.discrete(1), "cartpole")
    check_actions_fit([cartpole(0)], ActionSpec.discrete(2), "cartpole")


def test_a_run_from_stored_multi_discrete_episodes_publishes_a_model_that_answers_right(
        tmp_path, one_thread):
    from msagent.client.onnx_policy import OnnxPolicy
    from msagent.exporting.model_store import ModelStore
    from msagent.train import run_training
    from tests.train.helpers import example_config

    store, models = tmp_path / "exp", tmp_path / "models"
    ExperienceStore(str(store)).write(twin_records(40, seed=10, expert=True))
    env_script = Path(__file__).parent / "twin_target_env.py"
    cfg = example_config(tmp_path, "local", 'data.source="store"', f'data.store="{store}"',
                         'data.game="twin"', f"scripts.env={json.dumps(str(env_script))}",
                         "data.streams=8", "data.refresh_s=0.2", "data.max_uses=0",
                         'data.order="uniform"', 'algorithm.name="bc"', "algorithm.lr=0.003",
                         "algorithm.ent_coef=0.0", "services.env_worker.fragment_len=16",
                         f'publish.models="{models}"', 'publish.game="twin"',
                         "publish.every_snapshots=5", "run.stop.env_steps=3000",
                         "run.stop.mean_return=0", "run.stop.time_s=120")
    result = run_training(cfg)
    assert result["updates"] >= 20
    published = ModelStore(str(models))
    assert published.latest("twin").action == {"nvec": [3, 2]}
    client = OnnxPolicy(published.read("twin", published.versions("twin")[-1]))
    targets = draw_targets(np.random.default_rng(102), 500)
    actions, _ = client.act(one_hot(targets), greedy=True)
    assert np.asarray(actions).shape == (500, 2)
    assert float((np.asarray(actions) == targets).all(1).mean()) > 0.95
