"""The ``[run.stop]`` criteria checked against a metrics snapshot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from msagent.vocabulary import LEAGUE_MIXTURE

if TYPE_CHECKING:  # the config package imports torch; telemetry stays light
    from msagent.config.general import StopSection


def stop_reason(snapshot: dict[str, Any], stop: StopSection) -> str | None:
    """Why training should stop now (the first criterion reached), or None to go on.

    ``mean_return`` counts only once the metrics' episode window is full (build ``Metrics``
    with ``window=stop.return_window``), so a lucky first episode cannot end training.
    """
    if stop.env_steps and snapshot["env_steps"] >= stop.env_steps:
        return f"env_steps {snapshot['env_steps']} >= {stop.env_steps}"
    if stop.mean_return and _window_full(snapshot) and snapshot["mean_return"] >= stop.mean_return:
        return f"mean_return {snapshot['mean_return']:.4g} >= {stop.mean_return}"
    if stop.time_s and snapshot["elapsed_s"] >= stop.time_s:
        return f"time_s {snapshot['elapsed_s']:.1f} >= {stop.time_s}"
    return _eval_reason(snapshot, stop) or _nash_conv_reason(snapshot, stop)


def _eval_reason(snapshot: dict[str, Any], stop: StopSection) -> str | None:
    """The evaluation criterion: every (opponent, seat) row holds the rate over enough games."""
    rows = (snapshot.get("league") or {}).get("eval_rows") or []
    if not stop.eval_win_rate or not rows:
        return None
    if all(r["games"] >= stop.eval_games and r["win_rate"] >= stop.eval_win_rate for r in rows):
        worst = min(r["win_rate"] for r in rows)
        return (f"eval_win_rate {worst:.3f} >= {stop.eval_win_rate} against every opponent "
                f"from every seat (newest {stop.eval_games} games each)")
    return None


def _nash_conv_reason(snapshot: dict[str, Any], stop: StopSection) -> str | None:
    """The exploitability criterion: the evaluated player's newest NashConv measure."""
    measures = (snapshot.get("league") or {}).get("nash_conv") or {}
    for player, m in measures.items():
        if player == LEAGUE_MIXTURE:  # the league's mixture is measured beside, not judged
            continue
        if stop.nash_conv and m["nash_conv"] <= stop.nash_conv:
            return (f"nash_conv {m['nash_conv']:.4g} <= {stop.nash_conv} ({player} at version "
                    f"{m['version']})")
    return None


def _window_full(snapshot: dict[str, Any]) -> bool:
    """True when the mean covers a whole window of episodes."""
    return snapshot.get("mean_return") is not None and (
        snapshot.get("returns_in_window", 0) >= snapshot.get("return_window", 1)
    )
