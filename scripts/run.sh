#!/usr/bin/env bash
# Set up (if needed) and run the main job: a short AlphaStar-style league (main agent, main
# exploiter, league exploiter) on PettingZoo's tic-tac-toe over msagent's services on the
# embedded Ray, with live progress; it ends with the Elo ladder, the lineage, the payoff
# heatmap's path, the main agent's win/draw/loss against a random, a one-step-lookahead and a
# perfect bot from each seat, and its share of losing moves judged by a minimax.
# Extra arguments go to `msagent train` (e.g. --mode local, --set run.stop.time_s=60).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0   # the embedded Ray stays on 127.0.0.1
echo "[run] watch the league in a browser meanwhile: msagent dashboard runs/  (http://127.0.0.1:8420/)"
msagent train examples/tictactoe_league.toml "$@"
