#!/usr/bin/env bash
# Set up (if needed) and run the main job: PPO on CartPole-v1 over msagent's services on the
# embedded Ray (env workers, learner, replay buffer, model pool), with live progress and the
# final result. Extra arguments go to `msagent train` (e.g. --mode local, --set run.seed=3).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0   # the embedded Ray stays on 127.0.0.1
msagent train examples/cartpole_ppo.toml "$@"
