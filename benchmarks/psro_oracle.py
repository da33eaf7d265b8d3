"""How good one RL best response is: PPO against a fixed PSRO mixture, measured exactly.

Run: ``python benchmarks/psro_oracle.py [--iteration 35 | --mixture FILE] [--games 50000]
[--set KEY=VALUE]``.

PSRO with the RL oracle stalls where its best responses stop being better than what the
population holds (``br gap`` in the RL PSRO runs). This isolates that oracle from the loop:

1. PSRO with exact best responses runs on the game (Leduc poker by default, symmetric, Nash
   meta-solver) to ``--iteration``; its meta-strategy mixture, one table per seat, is the
   fixed opponent (about as exploitable as the RL runs' late mixtures at the default).
2. The mixture becomes a scripted bot (a lookup from the observation the env workers see to
   the mixture's action probabilities), and ``msagent train`` trains one player against it
   with the PSRO example's settings (``examples/<game>_psro_rl.toml``, ``--set`` to change
   them), for about ``--games`` games, as one best response of an RL PSRO run is trained.
3. The trained network, turned into a table over information states, is measured exactly:
   what it wins against the mixture in each seat, what an exact best response wins, and the
   gap summed over seats (the ``br gap`` of an RL PSRO iteration; 0 is a perfect oracle),
   both for the network as trained (sampling) and for its most likely action (greedy).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from msagent.psro import exact  # noqa: E402
from msagent.psro.exact_oracle import (ExactEvaluator, ExactOracle,  # noqa: E402
                                       TabularMembers, mixture_nash_conv)
from msagent.psro.loop import PSRO  # noqa: E402
from msagent.psro.meta_solvers import make_solver  # noqa: E402
from msagent.psro.neural import greedy_table  # noqa: E402
from train_proc import train_lines  # noqa: E402

BOT = textwrap.dedent('''\
    """A fixed PSRO mixture as a bot: the observation's bytes -> action probabilities."""
    from pathlib import Path

    import numpy as np

    _data = np.load(Path(__file__).with_name("mixture.npz"))
    _table = {o.tobytes(): p for o, p in zip(_data["obs"], _data["probs"])}
    _own = _data["obs"].shape[1]  # privileged observations carry the other seat's after it
    _rng = np.random.default_rng(0)


    def seed(n):
        global _rng
        _rng = np.random.default_rng(n)


    def act(observation, action_mask):
        probs = _table[np.asarray(observation, dtype=np.float32)[:_own].tobytes()]
        return int(_rng.choice(len(probs), p=probs))
    ''')


def exact_mixture(game: str, iteration: int) -> tuple[object, list[np.ndarray], float]:
    """The game's tree, the exact-oracle PSRO mixture after ``iteration`` iterations (one
    table per seat), and its NashConv."""
    from msagent.psro.game_tree import build_tree

    tree = build_tree(game)
    members = TabularMembers(tree)
    psro = PSRO(ExactOracle(members), ExactEvaluator(members), make_solver("nash"),
                mixture_nash_conv(members))
    state = psro.start(tree.num_players, symmetric=True)
    while state.iteration < iteration:
        psro.step(state)
    return tree, members.mixture_profile(state), float(state.history[-1].nash_conv)


def file_mixture(game: str, path: Path) -> tuple[object, list[np.ndarray], float]:
    """The game's tree, the mixture in a tabular policy file (``msagent export --format
    openspiel``, e.g. an RL PSRO run's), one table per seat, and its NashConv."""
    from msagent.psro.game_tree import build_tree
    from msagent.psro.tabular_io import profile_of, read_policy

    tree = build_tree(game)
    profile = profile_of(tree, read_policy(path))
    return tree, profile, float(exact.nash_conv(tree, profile))


def infostate_inputs(game: str, tree, privileged: bool = False):
    """What each seat observes at each of its information states (replayed once per run);
    ``privileged``: with the other seat's information state after its own."""
    import pyspiel

    from msagent.envs.adapters.openspiel import OpenSpielAdapter
    from msagent.psro.neural import InfostateInputs

    loaded = pyspiel.load_game(game)
    return InfostateInputs(loaded, tree, OpenSpielAdapter(loaded, privileged=privileged))


def write_bot(folder: Path, inputs, profile: list[np.ndarray]) -> Path:
    """The mixture as a bot script (and its table) in ``folder``; the script's path."""
    obs = np.concatenate([np.asarray(o, dtype=np.float32) for o in inputs.obs])
    probs = np.concatenate(profile)
    np.savez(folder / "mixture.npz", obs=obs, probs=probs / probs.sum(axis=1, keepdims=True))
    (folder / "mixture_bot.py").write_text(BOT)
    return folder / "mixture_bot.py"


def bot_config(example: Path, bot: Path, folder: Path) -> Path:
    """The PSRO example without PSRO: one player whose every game is against the bot."""
    import tomllib

    from msagent.config.toml_writer import dumps

    data = tomllib.loads(example.read_text())
    for key in ("env", "agent"):
        data["scripts"][key] = str(example.parent / data["scripts"][key])
    data["league"] = {"players": [{"id": "main", "role": "main"}], "bots": {"mix": str(bot)},
                      "roles": {"main": {"self_play": 0.0, "pfsp": 0.0, "exploiters": 0.0,
                                         "bots": 1.0, "bot_opponents": ["mix"]}}}
    data["services"]["evaluator"] = {"num": 0}
    path = folder / "oracle.toml"
    path.write_text(dumps(data))
    return path


def train_against(config: Path, root: Path, games: int, steps_per_game: float,
                  overrides: list[str]) -> tuple[Path, dict]:
    """Train the player for about ``games`` games; its run directory and result."""
    root.mkdir(parents=True, exist_ok=True)
    result = root / "result.json"
    stop = [f"run.root={json.dumps(str(root))}",
            f"run.stop.env_steps={int(games * steps_per_game)}"]
    for minutes, line in train_lines(config, 60.0, [*stop, *overrides], 10.0,
                                     ("--result-json", str(result))):
        if "steps=" in line:
            print(f"  {minutes:5.1f} min  {line.strip()[:110]}", flush=True)
    (run_dir,) = [p for p in root.iterdir() if p.is_dir()]
    return run_dir, json.loads(result.read_text())


def measure(tree, game: str, inputs, profile: list[np.ndarray], run_dir: Path) -> list[tuple]:
    """Per seat: the trained player's value against the mixture (sampling from its
    probabilities, and taking its most likely action), and an exact best response's;
    ``inputs`` are the seats' own observations, replayed again with the other seat's after
    them only for a policy trained on privileged ones."""
    from msagent.exporting.run_export import load_run_policy

    policy, _, _ = load_run_policy(run_dir, "main")
    if policy.obs_shape[0] != inputs.obs[0].shape[1]:
        inputs = infostate_inputs(game, tree, privileged=True)
    rows = []
    for seat in range(tree.num_players):
        values, sampled = [], inputs.table(policy, seat)
        for table in (sampled, greedy_table(sampled)):
            trial = list(profile)
            trial[seat] = table
            values.append(float(exact.expected_returns(tree, trial)[seat]))
        rows.append((*values, float(exact.best_response(tree, profile, seat)[1])))
    return rows


def main() -> None:
    """Build the mixture, train against it, print the exact gap."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iteration", type=int, default=35)
    parser.add_argument("--games", type=int, default=50_000)
    parser.add_argument("--steps-per-game", type=float, default=4.5,
                        help="env steps per game (to turn --games into the env-step stop)")
    parser.add_argument("--mixture", help="a tabular policy file to answer instead of exact "
                        "PSRO's mixture (e.g. msagent export RUN_DIR --format openspiel OUT)")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    if args.mixture:
        tree, profile, conv = file_mixture(args.game, Path(args.mixture))
        print(f"opponent: the mixture in {args.mixture}, NashConv {conv:.3f}", flush=True)
    else:
        tree, profile, conv = exact_mixture(args.game, args.iteration)
        print(f"opponent: exact PSRO's mixture after {args.iteration} iterations, "
              f"NashConv {conv:.3f}", flush=True)
    config = ROOT / "examples" / f"{args.game.split('_')[0]}_psro_rl.toml"
    inputs = infostate_inputs(args.game, tree)
    with tempfile.TemporaryDirectory(prefix="psro_oracle_") as tmp:
        folder = Path(tmp)
        bot = write_bot(folder, inputs, profile)
        start = time.time()
        run_dir, result = train_against(bot_config(config, bot, folder), folder / "runs",
                                        args.games, args.steps_per_game, args.overrides)
        rows = measure(tree, args.game, inputs, profile, run_dir)
    print(f"trained {result.get('episodes', 0):,} games, {result.get('updates', 0)} updates "
          f"in {time.time() - start:.0f} s ({' '.join(args.overrides) or 'example settings'})")
    for seat, (got, top, best) in enumerate(rows):
        print(f"  seat {seat}: trained {got:+.3f} (greedy {top:+.3f})  exact best response "
              f"{best:+.3f}  gap {best - got:.3f} (greedy {best - top:.3f})")
    print(f"br gap (summed over seats): {sum(b - g for g, _, b in rows):.3f}; "
          f"greedy: {sum(b - t for _, t, b in rows):.3f}")


if __name__ == "__main__":
    main()
