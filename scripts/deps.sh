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
TEST_PACKAGES=(nginx-light curl python3 python3-werkzeug sqlite3 rclone tmux bash zsh fish man-db groff-base)
