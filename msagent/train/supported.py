"""Configurations this version refuses, checked before anything starts (no torch, no Ray: the
CLI runs it before the embedded Ray is prestarted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msagent.errors import ConfigError

if TYPE_CHECKING:
    from msagent.config import TrainConfig


def check_supported(cfg: TrainConfig) -> None:
    """Refuse configurations this version cannot run, naming the key."""
    sv = cfg.services
    if cfg.league is not None and cfg.league.psro is not None:
        if cfg.league.psro.oracle == "exact":
            return
        if sv.evaluator.num < 1:
            raise ConfigError("league.psro.oracle = 'rl' needs services.evaluator.num >= 1 to "
                              "fill the meta-game")
    if cfg.league is not None and sv.learner.sync:
        raise ConfigError("services.learner.sync must be false with a [league]: each player's "
                          "learner updates on its own, so actors cannot wait for all of them; "
                          "bound staleness with services.learner.max_policy_lag instead")
    if sv.learner.num > 1 and cfg.run.mode != "ray":
        raise ConfigError(f"services.learner.num = {sv.learner.num} needs run.mode = 'ray': the "
                          "learners of a group are separate processes joined by a "
                          "torch.distributed process group")
    for key, value, allowed in (("services.buffer.num", sv.buffer.num, 1),
                                ("services.model_pool.num", sv.model_pool.num, 1)):
        if value != allowed:
            raise ConfigError(f"{key} = {value}: this version runs exactly {allowed}")
    _check_data(cfg)
    if sv.env_worker.num < 1 and cfg.data.source != "store":
        raise ConfigError("services.env_worker.num must be >= 1 to train")
    if sv.learner.sync and sv.learner.publish_every != 1:
        raise ConfigError("services.learner.publish_every must be 1 when services.learner.sync "
                          "= true: sync actors wait for every new version")


def _check_data(cfg: TrainConfig) -> None:
    """Stored uploads were acted by other policies: only off-policy-correct algorithms, and
    single-policy runs, may train on them."""
    if cfg.data.source == "env":
        return
    if cfg.league is not None:
        raise ConfigError(f"data.source = {cfg.data.source!r} is for single-policy runs; a "
                          "[league] trains on its own matches (use data.source = 'env')")
    if cfg.algorithm.name == "ppo":
        raise ConfigError(f"data.source = {cfg.data.source!r} needs an algorithm that is "
                          "correct on data it did not act: set [algorithm] name = 'impala' "
                          "(V-trace on the uploaded log-probabilities) or 'bc' (behaviour "
                          "cloning); PPO assumes its own, fresh experience")
