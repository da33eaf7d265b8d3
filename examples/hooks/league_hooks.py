"""Hooks of your own for a league run (``[callbacks] script = "hooks/league_hooks.py"``).

Each function runs in the process where its data is: ``on_update`` and ``on_snapshot`` in each
player's learner, ``on_match_result`` in the league service, ``on_evaluation`` and
``on_checkpoint`` in the driver. ``event.log(name, value)`` records a scalar: TensorBoard shows
it as ``user/<name>``, the dashboard lists it, and ``[callbacks] progress`` puts it on the
progress line. Module-level state lives as long as its process.
"""

from collections import deque

_lengths: deque = deque(maxlen=200)
_first_seat: deque = deque(maxlen=200)
_snapshots = {"count": 0}


def on_update(event):
    """Each player's policy entropy, after each of its updates."""
    if "losses/entropy" in event.stats:
        event.log(f"{event.player}/entropy", event.stats["losses/entropy"])


def on_match_result(event):
    """The mean length of the last 200 games, and how often the first seat won them."""
    _lengths.append(event.length)
    event.log("game_length", sum(_lengths) / len(_lengths))
    if len(event.returns) == 2:
        _first_seat.append(1.0 if event.returns[0] > event.returns[1] else 0.0)
        event.log("first_seat_wins", sum(_first_seat) / len(_first_seat))


def on_snapshot(event):
    """How many frozen league snapshots this learner made."""
    if event.frozen:
        _snapshots["count"] += 1
        event.log(f"{event.player}/league_snapshots", _snapshots["count"])


def on_evaluation(event):
    """The evaluated player's win rate against each fixed opponent, both seats together."""
    if event.kind == "eval":
        for opponent, figures in event.figures.items():
            if figures.get("win_rate") is not None:
                event.log(f"eval/{opponent}", figures["win_rate"])


def on_checkpoint(event):
    """The newest checkpoint's step."""
    event.log("checkpoint", event.step)
