"""The end of ``msagent train``: the result's figures, and a league's ladder, lineage,
evaluation and NashConv as tables and text."""

from __future__ import annotations

from rich.console import Console
from rich.pretty import Pretty
from rich.text import Text


def print_result(out: Console, result: dict) -> None:
    """Print the result's figures; a league's ladder, lineage and evaluation as tables and text."""
    league = result.get("league")
    shown = {k: v for k, v in result.items() if k != "league"}
    if league:
        shown["league"] = {k: v for k, v in league.items()
                           if k not in ("ladder", "lineage", "eval", "nash_conv", "evaluated")}
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
        if league.get("heatmap"):
            out.print(Text(f"payoff heatmap: {league['heatmap']}", style="bold"))


def _print_nash_convs(out: Console, measures: list[dict]) -> None:
    """The evaluated player's first and newest NashConv of the run (small OpenSpiel games)."""
    if measures:
        first, last = measures[0], measures[-1]
        out.print(f"{last['player']} NashConv {last['nash_conv']:.4f} at version "
                  f"{last['version']} (first measure {first['nash_conv']:.4f} at version "
                  f"{first['version']}; {len(measures)} measures)")
