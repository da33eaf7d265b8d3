#!/usr/bin/env bash
# Install Debian's PostgreSQL server with apt for the league database's PostgreSQL tests (they
# start their own cluster with initdb/pg_ctl on a free loopback port; the package's own
# cluster is not used). Skips when initdb is already there.
set -euo pipefail
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
echo "[setup] installing postgresql with apt (for the league database's PostgreSQL tests)"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
