"""Human-readable rows and lines from a metrics snapshot (shared by the live table and logs)."""

from __future__ import annotations

from typing import Any

DROPPED = "dropped_stale_fragments"
"""Counter name the learner uses for fragments discarded as too old."""


def rows(snapshot: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs in display order: throughput, returns, losses, counters."""
    window = f"mean return (last {snapshot.get('return_window', '?')})"
    out = [
        ("env steps", f"{snapshot.get('env_steps', 0):,}"),
        ("steps/s", f"{snapshot.get('steps_per_s', 0.0):,.0f}"),
        ("episodes", f"{snapshot.get('episodes', 0):,}"),
        (window, _number(snapshot.get("mean_return"))),
        ("policy version", _number(snapshot.get("policy_version"))),
        ("elapsed", duration(snapshot.get("elapsed_s", 0.0))),
    ]
    out += [(k if "/" in k else f"losses/{k}", _number(v))  # keys come named, e.g. losses/policy
            for k, v in sorted(snapshot.get("losses", {}).items())]
    counters = {DROPPED: 0, **snapshot.get("counters", {})}
    out += [(name.replace("_", " "), f"{n:,}") for name, n in sorted(counters.items())]
    out += [(f"user/{k}", _number(v)) for k, v in snapshot.get("user_progress", {}).items()]
    return out + league_rows(snapshot.get("league"))


def league_rows(view: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The league's players (Elo, win rate against their targets, snapshots), population and
    the evaluated player's win rates against fixed opponents."""
    if not view:
        return []
    out = [("league population", str(view.get("population", 0)))]
    for pid, p in view.get("players", {}).items():
        out.append((f"{pid} ({p['role']})", f"elo {p['elo']:.0f}  win {_number(p['win_rate'])}"
                                            f"  snapshots {p['snapshots']}"))
    if view.get("psro"):
        p = view["psro"]
        out.append(("psro", f"iteration {p['iteration']}  NashConv {_number(p['nash_conv'])}  "
                            f"population {p['population']}"))
    for opponent, e in view.get("eval", {}).items():
        out.append((f"eval vs {opponent}", f"{_number(e['win_rate'])} of {e['games']} games"))
    for player, m in view.get("nash_conv", {}).items():
        out.append((f"NashConv {player}", f"{_number(m['nash_conv'])} (version {m['version']})"))
    judged = view.get("judged") or {}
    for seat, exam in judged.get("seats", {}).items():
        out.append((f"losing moves seat {seat}", f"{losing_share(exam):.1%}"
                                                 f" (version {judged['version']})"))
    return out


def line(snapshot: dict[str, Any]) -> str:
    """One plain log line with the essentials, for terminals that are not TTYs."""
    losses = " ".join(f"{k}={_number(v)}" for k, v in sorted(snapshot.get("losses", {}).items()))
    parts = [
        f"steps={snapshot.get('env_steps', 0)}",
        f"steps/s={snapshot.get('steps_per_s', 0.0):.0f}",
        f"episodes={snapshot.get('episodes', 0)}",
        f"return={_number(snapshot.get('mean_return'))}",
        f"version={_number(snapshot.get('policy_version'))}",
        f"dropped={snapshot.get('counters', {}).get(DROPPED, 0)}",
        f"elapsed={duration(snapshot.get('elapsed_s', 0.0))}",
    ]
    parts += [f"{name}={n}" for name, n in sorted(snapshot.get("counters", {}).items())
              if name != DROPPED and n]
    parts += [f"user/{k}={_number(v)}" for k, v in snapshot.get("user_progress", {}).items()]
    view = snapshot.get("league") or {}
    if view:
        parts.append(f"population={view.get('population', 0)}")
        parts += [f"elo/{pid}={p['elo']:.0f}" for pid, p in view.get("players", {}).items()]
        parts += [f"eval/{r['opponent']}/seat{r['seat']}={r['win_rate']:.3f}({r['games']})"
                  for r in view.get("eval_rows", [])]
        parts += [f"nash_conv/{player}={m['nash_conv']:.4f}"
                  for player, m in view.get("nash_conv", {}).items()]
        judged = view.get("judged") or {}
        parts += [f"losing/seat{seat}={losing_share(e):.3f}"
                  for seat, e in judged.get("seats", {}).items()]
    return " ".join(parts + ([losses] if losses else []))


def duration(seconds: float) -> str:
    """``42.0s``, ``3m07s`` or ``2h05m09s``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s"


def _number(value: Any) -> str:
    """Ints as they are, floats to 4 significant digits, None as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}"


def losing_share(exam: dict[str, int]) -> float:
    """The share of a seat's positions in which the judged move loses value (a seat's entry
    of ``msagent.envs.judge.examine``)."""
    return exam["losing"] / max(exam["positions"], 1)
