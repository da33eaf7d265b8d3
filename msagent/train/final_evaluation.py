"""After a league run: its saved weights played against the evaluator's opponents, so the end
report says how strong the agent the run leaves behind is (the evaluator's own rows are over
its last games, played by the versions of the last minutes)."""

from __future__ import annotations

from typing import Any

from msagent.config import TrainConfig
from msagent.rundir import RunDir
from msagent.train.league_plan import evaluated_player


def final_evaluation(cfg: TrainConfig, run_dir: RunDir | None,
                     result: dict[str, Any]) -> dict[str, Any]:
    """The saved player (or the mean of its newest ``final_average`` snapshots), after the
    run: ``{"played": what played, "games": rows, "judged": exam or None}``. Rows: per
    opponent and seat, ``services.evaluator.final_games`` games each (the player moving one
    seat each game); the exam: the judge's losing moves per seat, when there is a judge.
    Empty for an interrupted or failed run, a run with no league or no games asked for."""
    ev = cfg.services.evaluator
    if ev.final_games <= 0 or run_dir is None or cfg.league is None or result.get("signal"):
        return {}
    from msagent.evaluate import evaluate_run  # torch and the game only when asked for

    player, average = evaluated_player(cfg), ev.final_average
    rows, played = [], ""
    for opponent in list(ev.opponents) or [f"bot:{b}" for b in cfg.league.bots]:
        done = evaluate_run(run_dir.path, player, opponent=opponent, games=ev.final_games,
                            seed=cfg.run.seed, average=average)
        played = (f"{player} as saved" if average == 1 else done.player) + \
            f" (checkpoint {done.step})"
        rows += [{"player": player, "opponent": opponent, "seat": seat, "games": tally.games,
                  "step": done.step, "win_rate": tally.win_rate, "draw_rate": tally.draw_rate,
                  "loss_rate": tally.loss_rate} for seat, tally in enumerate(done.result.by_seat)]
    return {"played": played, "games": rows, "judged": _judged(cfg, run_dir, player)}


def _judged(cfg: TrainConfig, run_dir: RunDir, player: str) -> dict[str, Any] | None:
    """The judge's exam of the player as the final games play it (None without a judge)."""
    ev = cfg.services.evaluator
    if not ev.judge:
        return None
    from msagent.envs.judge import examine, load_exams
    from msagent.evaluate import saved_policy

    policy, step = saved_policy(run_dir.path, player, ev.final_average)
    return {"player": player, "version": step, "judge": ev.judge, "time": 0.0,
            "seats": examine(policy, load_exams(ev.judge))}
