"""Why a Connect Four agent loses to the lookahead bot: its first mistake in each lost game.

Run: ``python benchmarks/connect4_blunders.py RUN_DIR [--player main] [--version N]
[--games 200]``.

Loads a snapshot of a Connect Four league run (the player's newest unless ``--version``),
plays it greedily against the one-step-lookahead bot (wins if it can, blocks if it must,
otherwise random) from each seat, and sorts each of the agent's moves that the bot's rules
can judge: a win not taken, a threat not blocked, a move that gives the bot a winning square
on top of it. A lost game is put down to the first such mistake in it, or to a double threat
(two winning squares at once) when the agent made none. It tells a tactics problem (the
network overlooks one-move wins and threats) from a strategy one.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from msagent.config.loader import load_config  # noqa: E402
from msagent.rundir import RunDir  # noqa: E402
from msagent.user_scripts import build_policy, game_factory  # noqa: E402
from msagent.vocabulary import ModelKey  # noqa: E402

BOT = ROOT / "examples" / "connect4" / "bots" / "lookahead_bot.py"


def load_bot():
    """The lookahead bot's module (its rules judge the agent's moves too)."""
    spec = importlib.util.spec_from_file_location("lookahead_bot", BOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def judge(bot, obs: np.ndarray, mask: np.ndarray, action: int) -> str | None:
    """The mistake ``action`` makes in this position by the bot's rules, or None."""
    mine, theirs = obs[:, :, 0] > 0, obs[:, :, 1] > 0
    filled = mine | theirs
    legal = np.flatnonzero(mask)
    wins = [c for c in legal if bot.completes_line(mine, bot.landing_row(filled, c), c)]
    threats = [c for c in legal if bot.completes_line(theirs, bot.landing_row(filled, c), c)]
    if wins:
        return None if action in wins else "win not taken"
    if threats:
        return None if action in threats else ("double threat" if len(threats) > 1
                                               else "threat not blocked")
    row = bot.landing_row(filled, action)
    if row > 0 and bot.completes_line(theirs, row - 1, action):
        return "winning square given on top"
    return None


def play(policy, game, bot, seat: int, seed: int) -> tuple[float, list[str]]:
    """One greedy game from ``seat``: the agent's return and its mistakes in order."""
    bot.seed(seed)
    turn, total, mistakes = game.reset(seed=seed), 0.0, []
    while not turn.done:
        (actor,) = turn.to_act
        obs, mask = turn.obs[actor], turn.masks[actor]
        if actor == seat:
            action = int(policy.act(obs[None], mask[None], deterministic=True).actions[0])
            mistakes += [m] if (m := judge(bot, obs, mask, action)) else []
        else:
            action = bot.act(obs, mask)
        turn = game.step({actor: action})
        total += float(turn.rewards[seat])
    return total, mistakes


def main() -> None:
    """Load the snapshot, play both seats, print results and the causes of the losses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--player", default="main")
    parser.add_argument("--version", type=int, default=None)
    parser.add_argument("--games", type=int, default=200, help="games per seat")
    args = parser.parse_args()
    cfg = load_config(args.run_dir / "config.toml")
    env, agent = cfg.scripts.env, cfg.scripts.agent
    version = args.version or max(int(p.stem.split("@")[1]) for p in
                                  (args.run_dir / "snapshots").glob(f"{args.player}@*.safetensors"))
    policy = build_policy(env, agent, cfg.env, 0)
    policy.set_weights(RunDir(args.run_dir).snapshots.load(ModelKey(args.player, version)))
    game, bot = game_factory(env, cfg.env)(), load_bot()
    print(f"{args.player}:{version} against the lookahead bot, {args.games} greedy games per seat")
    for seat in (0, 1):
        results, causes = Counter(), Counter()
        for g in range(args.games):
            ret, mistakes = play(policy, game, bot, seat, 10_000 * seat + g)
            outcome = "win" if ret > 0 else "loss" if ret < 0 else "draw"
            results[outcome] += 1
            if outcome == "loss":
                causes[mistakes[0] if mistakes else "double threat"] += 1
        print(f"seat {seat}: {results['win']} won, {results['draw']} drawn, "
              f"{results['loss']} lost; first mistake of each loss: {dict(causes)}")


if __name__ == "__main__":
    main()
