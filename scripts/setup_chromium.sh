#!/usr/bin/env bash
# Install Debian's chromium with apt for the dashboard's browser tests (Playwright drives it:
# it cannot download its own browsers here). Skips when a Chromium is already on PATH.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then exit 0; fi
done
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
echo "[setup] installing chromium with apt (for the dashboard's browser tests)"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
