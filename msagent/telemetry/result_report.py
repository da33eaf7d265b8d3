"""The end of ``msagent train``: the result's figures, and a league's ladder, lineage,
evaluation and NashConv as tables and text."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.pretty import Pretty
from rich.text import Text

from msagent.telemetry.formatting import losing_share
from msagent.vocabulary import LEAGUE_MIXTURE


def print_result(out: Console, result: dict) -> None:
    """Print the result's figures; a league's ladder, lineage and evaluation as tables and text."""
    league = result.get("league")
    shown = {k: v for k, v in result.items() if k != "league"}
    if league:
        shown["league"] = {k: v for k, v in league.items()
                           if k not in ("ladder", "lineage", "eval", "nash_conv", "evaluated", "judged",
                                         "final_eval", "mixture")}
    out.print(Text("result:", style="bold green"), Pretty(shown))
    if league:
        out.print(Text(league.get("ladder", "")))
        out.print(Text("lineage:", style="bold"))
        out.print(Text(league.get("lineage", "")))
        for row in league.get("eval", []):
            out.print(f"{league.get('evaluated') or 'main'} vs {row['opponent']} from seat "
                      f"{row['seat']}: win "
                      f"{row['win_rate']:.1%} (95% CI {row['ci_low']:.1%}-{row['ci_high']:.1%})"
                      f", draw {row['draw_rate']:.1%}, loss {row['loss_rate']:.1%} over the last "
                      f"{row['games']} games")
        _print_nash_convs(out, league.get("nash_conv", []))
        _print_mixture(out, league.get("mixture"))
        _print_judged(out, league.get("judged", []))
        _print_final(out, league.get("final_eval") or {})
        if league.get("heatmap"):
            out.print(Text(f"payoff heatmap: {league['heatmap']}", style="bold"))


def _print_nash_convs(out: Console, measures: list[dict]) -> None:
    """Each measured one's (the evaluated player's, the league's mixture's) first and newest
    NashConv of the run (small OpenSpiel games)."""
    for player in dict.fromkeys(m["player"] for m in measures):
        mine = [m for m in measures if m["player"] == player]
        first, last = mine[0], mine[-1]
        at = "of {} snapshots" if player == LEAGUE_MIXTURE else "at version {}"
        out.print(f"{player} NashConv {last['nash_conv']:.4f} {at.format(last['version'])} "
                  f"(first measure {first['nash_conv']:.4f} {at.format(first['version'])}; "
                  f"{len(mine)} measures)")


MIXTURE_SHOWN = 5
"""Members per seat the end report names (the run's league state has them all)."""


def _print_mixture(out: Console, mixture: dict | None) -> None:
    """The league's mixture: its heaviest members per seat and its NashConv."""
    if not mixture:
        return
    measured = mixture.get("nash_conv")
    out.print(Text(f"league mixture of {mixture['members']} snapshots, NashConv "
                   + (f"{measured:.4f}:" if measured is not None else "not measured:"),
                   style="bold"))
    for seat, weights in enumerate(mixture["seats"]):
        top = list(weights.items())[:MIXTURE_SHOWN]
        rest = len(weights) - len(top)
        out.print(f"  seat {seat}: " + ", ".join(f"{m} {w:.0%}" for m, w in top) +
                  (f" and {rest} more" if rest else ""))


def _print_judged(out: Console, exams: list[dict]) -> None:
    """The evaluated player's losing-move share per seat at the newest exam of the judge (and
    at the first, to show the way travelled)."""
    if exams:
        first, last = exams[0], exams[-1]
        for seat, exam in sorted(last["seats"].items(), key=lambda kv: int(kv[0])):
            was = first["seats"].get(seat) or first["seats"].get(int(seat)) or exam
            out.print(f"{last['player']} from seat {seat} plays a losing move in "
                      f"{losing_share(exam):.1%} of {exam['positions']:,} positions at version "
                      f"{last['version']} (first exam {losing_share(was):.1%} at version "
                      f"{first['version']}; judge {Path(last['judge']).name})")


def _print_final(out: Console, final: dict) -> None:
    """The saved weights' (or their snapshots' mean's) games against each opponent from each
    seat, and their exam."""
    exam, played = final.get("judged"), final.get("played")
    if exam:
        name = played or f"{exam['player']} as saved (checkpoint {exam['version']})"
        for seat, found in sorted(exam["seats"].items(), key=lambda kv: int(kv[0])):
            out.print(f"{name} plays a losing move from seat {seat} in {losing_share(found):.1%}"
                      f" of {found['positions']:,} positions")
    for row in final.get("games", []):
        name = played or f"{row['player']} as saved (checkpoint {row['step']})"
        out.print(f"{name} vs {row['opponent']} from seat {row['seat']}: win "
                  f"{row['win_rate']:.1%}, draw {row['draw_rate']:.1%}, loss "
                  f"{row['loss_rate']:.1%} over {row['games']} games")
