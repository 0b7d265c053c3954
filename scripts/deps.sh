# Installs the Debian packages transferd needs, only those missing. Sourced by run.sh and test.sh.
#   install_packages PACKAGE...
install_packages() {
    local missing=()
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# What the build links against.
BUILD_PACKAGES=(libcurl4-openssl-dev libuv1-dev libsqlite3-dev)
# What the integration tests start or call.
TEST_PACKAGES=(nginx-light curl python3 python3-werkzeug python3-venv sqlite3 rclone tmux bash zsh fish man-db groff-base)

# The Python servers the S3 and tus tests run (moto, tuspyserver under uvicorn) and boto3, from
# PyPI into a venv made by Debian's python3 (python3-venv), pinned by
# Tests/IntegrationTests/Harness/requirements.txt. The harness finds the venv there
# (TestVenv.swift; $TRANSFERD_TEST_VENV overrides both).
TEST_VENV=${TRANSFERD_TEST_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build/test-venv}
TEST_REQUIREMENTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Tests/IntegrationTests/Harness/requirements.txt

#   install_python_test_packages: only when missing or requirements.txt changed (a stamp with
#   its sha256 inside the venv, and the modules import), so a second run takes a second.
install_python_test_packages() {
    local want stamp="$TEST_VENV/.requirements.sha256"
    want=$(sha256sum "$TEST_REQUIREMENTS" | cut -d' ' -f1)
    if [ -x "$TEST_VENV/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] \
        && "$TEST_VENV/bin/python3" -c 'import moto.server, boto3, tuspyserver, uvicorn' 2>/dev/null; then
        return 0
    fi
    echo "installing the Python test servers into $TEST_VENV" >&2
    "$TEST_VENV/bin/python3" -c '' 2>/dev/null || /usr/bin/python3 -m venv --clear "$TEST_VENV"  # none, or broken
    "$TEST_VENV/bin/python3" -m pip install -q --disable-pip-version-check -r "$TEST_REQUIREMENTS" >&2
    echo "$want" > "$stamp"
}
