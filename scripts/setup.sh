#!/usr/bin/env bash
# Set up everything msagent needs on a fresh machine (Python, pip, gcc and apt only):
# redis-server from apt where missing, a virtual environment in .venv, torch pinned to the
# CPU build through constraints.txt, Ray and the rest. Safe to run again: it skips what is done.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

if ! command -v redis-server >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "[setup] installing redis-server with apt"
  ($SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) \
    || echo "[setup] warning: could not install redis-server; Redis-backed tests will be skipped"
fi

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PYTHON" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
stamp=".venv/.msagent-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  echo "[setup] installing msagent and its dependencies (torch CPU, ray, ...)"
  python -m pip install -q --upgrade pip
  python -m pip install -q -c constraints.txt -e ".[test,docs]"   # docs: the site's strict build (a test)
  # FightingICE's protocol stubs: pyftg pins old grpcio/protobuf, which its stubs do not need
  # (checked against the real game), so it comes without its dependencies
  python -m pip install -q --no-deps pyftg==2.3
  touch "$stamp"
fi
# the dashboard's charts: plotly.js's cartesian bundle from the npm registry (pinned, checked),
# once; without it the dashboard serves the full plotly.js that Plotly's Python package ships
python -m msagent.dashboard.assets
