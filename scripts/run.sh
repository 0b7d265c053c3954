#!/usr/bin/env bash
# Sets everything up and starts transferd in the foreground on its default state directory
# ($TRANSFERD_STATE_DIR, else $XDG_STATE_HOME/transferd, else ~/.local/state/transferd).
# Extra arguments go to transferd, e.g. scripts/run.sh --max-active 8
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
install_packages "${BUILD_PACKAGES[@]}"
scripts/build.sh >&2
echo "transferctl is at $(pwd)/.build/release/transferctl" >&2
exec .build/release/transferd "$@"
