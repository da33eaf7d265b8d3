#!/usr/bin/env bash
# Set up Google Research Football (gfootball 2.10.2) in its own virtual environment, .venv-football.
# gfootball needs gym 0.25 and a pygame that clashes with PettingZoo's, so it never goes into .venv;
# msagent talks to it through a child process (msagent/envs/games/football/server.py).
# Installs the apt build dependencies (SDL2, Boost, GL/EGL, cmake), then builds the C++ engine
# (about 12 minutes on 2 cores; pip caches the wheel, so a rebuild on the same machine is quick).
# Safe to run again: a stamp file makes a second run instant.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=".venv-football"
STAMP="$VENV/.football-installed"
GFOOTBALL_VERSION="2.10.2"

if [ -f "$STAMP" ] && [ "$STAMP" -nt "$0" ]; then
  echo "[football] already set up ($VENV); delete $STAMP to redo"
  exit 0
fi

APT_PACKAGES=(build-essential cmake git libgl1-mesa-dev libegl-dev libsdl2-dev libsdl2-image-dev
  libsdl2-ttf-dev libsdl2-gfx-dev libboost-thread-dev libboost-system-dev libboost-filesystem-dev
  libboost-python-dev python3-dev)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "[football] installing apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "[football] apt packages present"
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "[football] creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
# The engine build script calls `python3 -c 'import psutil'`, so the venv must come first on PATH.
# shellcheck disable=SC1091
. "$VENV/bin/activate"
CONSTRAINTS="$VENV/constraints.txt"
# gym 0.25 uses np.bool8 (gone in numpy 2); opencv-python 4.12+ wants numpy 2.
printf 'numpy==1.26.4\ngym==0.25.2\nopencv-python==4.10.0.84\n' > "$CONSTRAINTS"
echo "[football] installing build and run-time dependencies"
python -m pip install -q --upgrade pip
python -m pip install -q -c "$CONSTRAINTS" psutil wheel setuptools gym six numpy msgpack
echo "[football] installing gfootball==$GFOOTBALL_VERSION (builds the C++ engine, ~12 min on 2 cores)"
start=$(date +%s)
python -m pip install -q -c "$CONSTRAINTS" --no-build-isolation "gfootball==$GFOOTBALL_VERSION"
echo "[football] gfootball installed in $(( $(date +%s) - start ))s"
echo "[football] smoke test"
python - <<'EOF'
import gfootball.env as football_env
env = football_env.create_environment(env_name="academy_empty_goal_close", representation="simple115v2")
obs = env.reset()
env.step(0)
env.close()
print("[football] ok: observation shape", obs.shape)
EOF
touch "$STAMP"
echo "[football] done: $VENV"
