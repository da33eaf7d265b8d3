#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Google Research Football in its own .venv-football (a one-time ~12 min engine build that pip
# caches); MSAGENT_SKIP_FOOTBALL=1 leaves it out and its tests skip
[ "${MSAGENT_SKIP_FOOTBALL:-0}" = 1 ] || bash scripts/setup_football.sh
# Chromium for the dashboard's browser tests (Playwright drives Debian's package; without it
# those tests skip with a message)
bash scripts/setup_chromium.sh || echo "[test] warning: no chromium; the dashboard's browser tests will skip"
# PostgreSQL's server for the league database's tests on PostgreSQL (they skip without it)
bash scripts/setup_postgresql.sh || echo "[test] warning: no postgresql; its tests will skip"
. .venv/bin/activate
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0   # Ray stays on 127.0.0.1
# two test processes (pytest-xdist) on 2 cores: much of the suite waits on Ray, sockets and
# subprocesses, so two at once take ~2/3 of the serial time; MSAGENT_TEST_WORKERS=0 runs serially
WORKERS="${MSAGENT_TEST_WORKERS:-2}"
XDIST=(); [ "$WORKERS" = 0 ] || XDIST=(-n "$WORKERS" --dist worksteal)
python -m pytest tests -q -p no:cacheprovider --durations=20 "${XDIST[@]}" "$@"
