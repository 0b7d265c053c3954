#!/usr/bin/env bash
# The floor under transferd's loop thread (bench/loop-floor.c: libcurl's multi socket interface
# driven by libuv as transferd drives it, each body written to its own file, nothing else)
# against `curl -Z --parallel-max 16` (the same libcurl driven by its own poll loop), alternating
# on the same FILES × 64 KiB from a local nginx, RUNS times. Each run prints both tools' wall
# time and CPU (user + system); then the medians and the median ratios floor / curl. What
# transferd's loop spends per file beyond this floor is its own (bench/cpu-smallfiles.sh).
#   usage: bench/loop-floor.sh [RUNS=5] [FILES=2000]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages time libuv1-dev libcurl4-openssl-dev
RUNS=${1:-5}
FILES=${2:-2000}

cc -O2 -o "$BENCH_DIR/loop-floor" "$ROOT/bench/loop-floor.c" -lcurl -luv
mkdir -p "$BENCH_DIR/www/small"
for i in $(seq "$FILES"); do head -c 65536 /dev/urandom > "$BENCH_DIR/www/small/f$i"; done
start_nginx '' 'keepalive_requests 1000000;'
machine
for i in $(seq "$FILES"); do printf 'url = "http://127.0.0.1:%d/small/f%d"\noutput = "f%d"\n' "$PORT" "$i" "$i"; done > "$BENCH_DIR/curl.cfg"

# Runs "$@" in the new directory $1 after `settle`; prints its wall and CPU time in ms.
measure() {
    local dir=$1; shift
    mkdir -p "$dir"; settle true
    local start end
    start=$(now)
    (cd "$dir" && /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%U %S' "$@" 2>/dev/null)
    end=$(now)
    local count; count=$(find "$dir" -type f -size 64k | wc -l)
    [ "$count" -eq "$FILES" ] || { echo "$* wrote $count files" >&2; exit 1; }
    printf '%.0f %.0f\n' "$(echo "($end - $start) * 1000" | bc -l)" "$(awk '{ print ($1 + $2) * 1000 }' "$BENCH_DIR/time.txt")"
}

printf '%-4s %10s %9s %11s %10s\n' run curl_ms curl_cpu floor_ms floor_cpu
: > "$BENCH_DIR/wall.txt"; : > "$BENCH_DIR/cpu.txt"; : > "$BENCH_DIR/cw.txt"; : > "$BENCH_DIR/cc.txt"; : > "$BENCH_DIR/fw.txt"; : > "$BENCH_DIR/fc.txt"
for run in $(seq 0 "$RUNS"); do  # run 0: untimed
    read -r cw cc < <(measure "$BENCH_DIR/out/c$run" curl -s -Z --parallel-max 16 -K "$BENCH_DIR/curl.cfg")
    read -r fw fc < <(measure "$BENCH_DIR/out/f$run" "$BENCH_DIR/loop-floor" "http://127.0.0.1:$PORT/small/f" "$FILES" .)
    [ "$run" -eq 0 ] && continue
    printf '%-4s %10d %9d %11d %10d\n' "$run" "$cw" "$cc" "$fw" "$fc"
    echo "$cw" >> "$BENCH_DIR/cw.txt"; echo "$cc" >> "$BENCH_DIR/cc.txt"; echo "$fw" >> "$BENCH_DIR/fw.txt"; echo "$fc" >> "$BENCH_DIR/fc.txt"
    echo "$fw / $cw" | bc -l >> "$BENCH_DIR/wall.txt"; echo "$fc / $cc" | bc -l >> "$BENCH_DIR/cpu.txt"
done
printf 'medians: curl -Z %.0f ms, %.0f ms CPU; floor %.0f ms, %.0f ms CPU; ratio floor / curl: wall %.2f, CPU %.2f\n' \
    "$(median < "$BENCH_DIR/cw.txt")" "$(median < "$BENCH_DIR/cc.txt")" "$(median < "$BENCH_DIR/fw.txt")" \
    "$(median < "$BENCH_DIR/fc.txt")" "$(median < "$BENCH_DIR/wall.txt")" "$(median < "$BENCH_DIR/cpu.txt")"
