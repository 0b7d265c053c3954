#!/usr/bin/env bash
# Sets everything up and runs every test: unit tests and integration tests against the real
# transferd, transferctl, SQLite and private servers on 127.0.0.1 (nginx, rclone, moto, tuspyserver).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
install_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
install_python_test_packages
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build
