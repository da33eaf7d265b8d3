"""TrainConfig defaults, strict types and the converters to PPOConfig / TableConfig."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from msagent.buffer.rate_limiter import RateLimiterConfig
from msagent.config import load_config
from msagent.config.schema import ASYNC_MAX_POLICY_LAG
from msagent.errors import ConfigError
from msagent.policy.algorithms.ppo import PPOConfig
from msagent.runtime.backend import Resources
from msagent.train.supported import check_supported

from tests.config.helpers import MINIMAL

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_minimal_config_gets_every_default(write_config) -> None:
    cfg = load_config(write_config(MINIMAL))
    run = cfg.run
    assert (run.name, run.root, run.mode, run.address) == ("run", "runs", "ray", "")
    assert cfg.run.stop.env_steps == 1_000_000 and cfg.run.stop.mean_return == 0.0
    assert cfg.services.env_worker.num_envs == 32 and cfg.services.inference.mode == "local"
    assert cfg.services.learner.sync is True and cfg.services.buffer.sampler == "fifo"
    assert cfg.logging.progress and cfg.logging.tensorboard and cfg.env == {}


def test_minimal_config_builds_library_defaults(write_config) -> None:
    cfg = load_config(write_config(MINIMAL))
    assert cfg.ppo_config() == PPOConfig()
    assert cfg.services.env_worker.resources.to_resources() == Resources()
    table = cfg.table_config()
    assert (table.name, table.max_size, table.max_times_sampled) == ("fragments", 4096, 1)
    assert table.rate_limiter == RateLimiterConfig(min_size_to_sample=1)


def test_only_set_algorithm_keys_reach_ppo_config(write_config) -> None:
    text = MINIMAL + '[run]\nseed = 7\n[algorithm]\nlr = 3e-3\nminibatches = 2\n'
    text += 'max_grad_norm = "none"\n'
    ppo = load_config(write_config(text)).ppo_config()
    assert ppo == PPOConfig(lr=3e-3, minibatches=2, max_grad_norm=None, seed=7)


def test_algorithm_seed_wins_over_run_seed(write_config) -> None:
    cfg = load_config(write_config(MINIMAL + "[run]\nseed = 7\n[algorithm]\nseed = 3\n"))
    assert cfg.ppo_config().seed == 3 and cfg.table_config().seed == 7


def test_ppo_config_checks_surface_at_the_algorithm_key(write_config) -> None:
    with pytest.raises(ConfigError, match=r"algorithm: anneal_lr needs total_updates or anneal_s"):
        load_config(write_config(MINIMAL + "[algorithm]\nanneal_lr = true\n"))


def test_anneal_lr_without_a_plan_decays_over_the_runs_time(write_config) -> None:
    timed = MINIMAL + "[run.stop]\ntime_s = 90\n[algorithm]\nanneal_lr = true\n"
    assert load_config(write_config(timed)).ppo_config().anneal_s == 90.0
    # --set makes the run shorter: the decay follows it
    assert load_config(write_config(timed), ["run.stop.time_s=30"]).ppo_config().anneal_s == 30
    planned = load_config(write_config(timed + "total_updates = 500\n")).ppo_config()
    assert planned.anneal_s is None and planned.total_updates == 500
    assert load_config(write_config(timed + "anneal_s = 20\n")).ppo_config().anneal_s == 20
    off = load_config(write_config(MINIMAL + "[run.stop]\ntime_s = 90\n")).ppo_config()
    assert off.anneal_s is None and not off.anneal_lr
    with pytest.raises(ConfigError, match=r"run\.stop\.time_s stands in for anneal_s"):
        load_config(write_config(MINIMAL + "[algorithm]\nanneal_lr = true\n"))


def test_none_word_is_refused_where_ppo_needs_a_value(write_config) -> None:
    with pytest.raises(ConfigError, match=r"algorithm\.epochs: expected a valid integer"):
        load_config(write_config(MINIMAL + '[algorithm]\nepochs = "none"\n'))


def test_ints_accepted_as_floats_but_not_strings_or_bools(write_config) -> None:
    cfg = load_config(write_config(MINIMAL + "[run.stop]\nmean_return = 475\n"))
    assert cfg.run.stop.mean_return == 475.0
    with pytest.raises(ConfigError, match=r"learner\.max_policy_lag: expected a valid integer"):
        load_config(write_config(MINIMAL + "[services.learner]\nmax_policy_lag = true\n"))
    with pytest.raises(ConfigError, match=r"run\.stop\.env_steps: expected a valid integer"):
        load_config(write_config(MINIMAL + "[run.stop]\nenv_steps = 5e5\n"))


@pytest.mark.parametrize(
    ("table", "line", "key"),
    [
        ("services.env_worker", "num = -1", "services.env_worker.num"),
        ("services.env_worker", "num_envs = 0", "services.env_worker.num_envs"),
        ("services.inference", "mode = \"remote\"", "services.inference.mode"),
        ("services.buffer", "sampler = \"random\"", "services.buffer.sampler"),
        ("services.model_pool", "url = \"http://x\"", "services.model_pool.url"),
        ("logging", "log_every_s = 0", "logging.log_every_s"),
        ("run", "mode = \"cluster\"", "run.mode"),
    ],
)
def test_constraints_name_the_key(write_config, table: str, line: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(f"{MINIMAL}[{table}]\n{line}\n"))
    assert f"  {key}:" in str(info.value)


def test_central_inference_needs_a_server(write_config) -> None:
    text = MINIMAL + '[services.inference]\nmode = "central"\nnum = 0\n'
    with pytest.raises(ConfigError, match=r"services\.inference: mode = 'central' needs num >= 1"):
        load_config(write_config(text))


def test_buffer_combination_checked_by_table_config(write_config) -> None:
    text = MINIMAL + "[services.buffer]\nmax_size = 8\nmin_size_to_sample = 9\n"
    with pytest.raises(ConfigError, match=r"services\.buffer: .*exceeds max_size=8"):
        load_config(write_config(text))


def test_samples_per_insert_builds_a_ratio_limiter(write_config) -> None:
    text = MINIMAL + "[services.buffer]\nsamples_per_insert = 4.0\nmin_size_to_sample = 2\n"
    limiter = load_config(write_config(text)).table_config().rate_limiter
    assert limiter == RateLimiterConfig(2, 4.0, 4.0)


def test_resources_keep_runtime_defaults_for_unset_keys(write_config) -> None:
    text = MINIMAL + "[services.learner]\nresources = { num_gpus = 1, custom = { trainer = 1 } }\n"
    res = load_config(write_config(text)).services.learner.resources.to_resources()
    assert res == Resources(num_gpus=1.0, custom={"trainer": 1.0})


def test_keep_last_zero_means_keep_everything(write_config) -> None:
    cfg = load_config(write_config(MINIMAL + "[services.model_pool]\nkeep_last = 0\n"))
    assert cfg.services.model_pool.keep_last_or_none() is None


def test_assignment_is_validated_too(write_config) -> None:
    cfg = load_config(write_config(MINIMAL))
    with pytest.raises(ValueError):
        cfg.services.env_worker.num_envs = "many"  # type: ignore[assignment]


def test_env_table_is_free_form(write_config, tmp_path: Path) -> None:
    text = MINIMAL + '[env]\nid = "CartPole-v1"\nmax_steps = 200\nlayout = { w = 3 }\n'
    cfg = load_config(write_config(text))
    assert cfg.env == {"id": "CartPole-v1", "max_steps": 200, "layout": {"w": 3}}


LEAGUE = '[[league.players]]\nid = "main"\nrole = "main"\n'


def test_a_league_s_learners_default_to_async_with_a_small_policy_lag(write_config) -> None:
    cfg = load_config(write_config(MINIMAL + LEAGUE))
    assert cfg.services.learner.sync is False  # a league cannot run sync learners
    assert cfg.services.learner.max_policy_lag == ASYNC_MAX_POLICY_LAG > 0
    check_supported(cfg)  # the smallest league config runs as it is


def test_an_async_single_policy_run_defaults_to_a_small_policy_lag(write_config) -> None:
    """With ``sync = false`` and lag 0, a fragment acted while the learner updates is dropped
    (20 s of tic-tac-toe with IMPALA: 59 updates and 8,096 fragments dropped; with 3, 85 and
    5,536: the actors still outrun that learner)."""
    learner = load_config(write_config(MINIMAL + "[services.learner]\nsync = false\n")
                          ).services.learner
    assert learner.max_policy_lag == ASYNC_MAX_POLICY_LAG
    set_ = load_config(write_config(MINIMAL + "[services.learner]\nsync = false\n"
                                    "max_policy_lag = 0\n")).services.learner
    assert set_.max_policy_lag == 0
    assert load_config(write_config(MINIMAL)).services.learner.max_policy_lag == 0  # sync


def test_a_league_keeps_the_learner_keys_it_sets(write_config) -> None:
    text = MINIMAL + "[services.learner]\nmax_policy_lag = 0\n" + LEAGUE
    cfg = load_config(write_config(text))
    assert cfg.services.learner.max_policy_lag == 0 and cfg.services.learner.sync is False
    explicit = load_config(write_config(MINIMAL + "[services.learner]\nsync = true\n" + LEAGUE))
    assert explicit.services.learner.sync is True
    with pytest.raises(ConfigError, match="services.learner.sync must be false with a"):
        check_supported(explicit)


@pytest.mark.parametrize(("own", "expected"), [
    ("{lr=-1}", "league.players 'x': algorithm.lr: lr must be > 0"),
    ("{nope=1}", "league.players 'x': algorithm.nope: unknown key"),
    ('{name="dqn"}', "league.players 'x': algorithm.name: expected 'ppo', 'impala' or 'bc'"),
    ('{script="missing.py"}', "league.players 'x': algorithm.script: script file not found"),
    ("{anneal_lr=true, total_updates=0}", "league.players 'x': algorithm."),
])
def test_a_player_s_bad_algorithm_keys_are_refused_naming_the_player(own: str,
                                                                     expected: str) -> None:
    players = (f'league.players=[{{id="main", role="main"}}, '
               f'{{id="x", role="main_exploiter", algorithm={own}}}]')
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(EXAMPLES / "kuhn_league.toml", [players])


def test_a_player_s_anneal_lr_decays_over_the_run_s_time() -> None:
    players = ('league.players=[{id="main", role="main", '
               'algorithm={name="impala", anneal_lr=true}}]')
    cfg = load_config(EXAMPLES / "kuhn_league.toml", [players, "run.stop.time_s=90"])
    assert cfg.player_algorithm("main").ppo_config().anneal_s == 90.0


def test_a_player_s_agent_is_resolved_and_psro_refuses_one() -> None:
    players = ('league.players=[{id="main", role="main"}, {id="x", role="main_exploiter", '
               'agent="tictactoe/tictactoe_mlp_agent.py"}]')
    cfg = load_config(EXAMPLES / "tictactoe_league.toml", [players])
    assert cfg.agent_of("x") == EXAMPLES / "tictactoe" / "tictactoe_mlp_agent.py"
    assert cfg.agent_of("main") == cfg.scripts.agent
    with pytest.raises(ConfigError, match="script file not found"):
        load_config(EXAMPLES / "tictactoe_league.toml", [players.replace("mlp", "nope")])
    with pytest.raises(ConfigError, match="agent, algorithm, learner and buffer are not"):
        load_config(EXAMPLES / "kuhn_psro_rl.toml",
                    ['league.players=[{id="main", agent="openspiel/openspiel_agent.py"}]'])
