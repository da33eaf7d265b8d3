#!/usr/bin/env bash
# Set up (if needed) and run the main job. Extra arguments go to the job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0   # the embedded Ray stays on 127.0.0.1
python examples/runtime_demo.py "$@"
