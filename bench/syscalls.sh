#!/usr/bin/env bash
# System calls per GiB downloaded: one download of the same file from a local nginx by
# `curl -o`, `wget2` and transferd, each under `strace -c -f` (transferd: the daemon, from
# `download` to `wait` returning). Prints, per tool, the calls that write, receive or sync and
# the average bytes per write call. strace slows every call, so this counts; it does not time.
#   usage: bench/syscalls.sh [SIZE_MIB=1024]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages wget2 strace
SIZE_MIB=${1:-1024}
TRACED=pwrite64,write,writev,recvfrom,read,fsync,fdatasync,sync_file_range

build_release
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$BENCH_DIR/www/file.bin"
start_nginx
start_transferd
URL="http://127.0.0.1:$PORT/file.bin"
machine
echo "file: $SIZE_MIB MiB; figures per GiB"

# Prints the strace summary in $1 as calls per GiB, and bytes per write call.
per_gib() {
    awk -v mib="$SIZE_MIB" -v tool="$2" '
        $NF ~ /^(pwrite64|write|writev|recvfrom|read|fsync|fdatasync|sync_file_range)$/ {
            calls[$NF] = $4; if ($NF ~ /write/) writes += $4 }
        END {
            line = sprintf("%-10s", tool)
            for (name in calls) line = line sprintf(" %s %.0f", name, calls[name] * 1024 / mib)
            printf "%s; %.0f KiB per write call\n", line, (writes ? mib * 1024 / writes : 0)
        }' "$1"
}

sync
strace -f -c -e trace=$TRACED -o "$BENCH_DIR/curl.strace" curl -sf -o "$BENCH_DIR/out/curl.bin" "$URL"
per_gib "$BENCH_DIR/curl.strace" curl
rm -f "$BENCH_DIR/out/"*; sync
if command -v wget2 >/dev/null; then
    strace -f -c -e trace=$TRACED -o "$BENCH_DIR/wget2.strace" wget2 -q --no-robots -O "$BENCH_DIR/out/wget2.bin" "$URL"
    per_gib "$BENCH_DIR/wget2.strace" wget2
    rm -f "$BENCH_DIR/out/"*; sync
fi
strace -f -c -e trace=$TRACED -p "$TRANSFERD_PID" -o "$BENCH_DIR/transferd.strace" 2>"$BENCH_DIR/strace.err" & tracer=$!
until grep -q attached "$BENCH_DIR/strace.err"; do sleep 0.05; done  # every thread traced
id=$(ctl download "$URL" -o "$BENCH_DIR/out/transferd.bin"); ctl wait "$id" >/dev/null
kill -INT "$tracer"; wait "$tracer" 2>/dev/null || true
per_gib "$BENCH_DIR/transferd.strace" transferd
