#!/usr/bin/env bash
# The floor under transferd's loop thread (bench/loop-floor.c: libcurl's multi socket interface
# driven by libuv as transferd drives it, each body written to its own file, nothing else), and
# the same with transferd's promises kept the least way they can be (every job a row in SQLite,
# the attempts recorded, the files synced with one syncfs per group, recorded finalizing,
# renamed, their directory fsynced, recorded completed), against `curl -Z --parallel-max 16`
# (the same libcurl driven by its own poll loop), alternating on the same FILES × 64 KiB from a
# local nginx, RUNS times. Each run prints the three wall times and CPU (user + system); then
# the medians and the median ratios to curl. What transferd spends per file beyond the durable
# floor is its own (bench/cpu-smallfiles.sh).
#   usage: bench/loop-floor.sh [RUNS=5] [FILES=2000]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages time libuv1-dev libcurl4-openssl-dev libsqlite3-dev
RUNS=${1:-5}
FILES=${2:-2000}

cc -O2 -o "$BENCH_DIR/loop-floor" "$ROOT/bench/loop-floor.c" -lcurl -luv -lsqlite3 -lpthread
fresh_inodes
small_files "$FILES"
start_nginx '' 'keepalive_requests 1000000;'
machine
curl_config "$FILES"

# Runs "$@" in the new directory $1 after `settle`; prints its wall and CPU time in ms.
measure() {
    local dir=$1; shift
    mkdir -p "$dir"; settle true
    local start end
    start=$(now)
    (cd "$dir" && /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%U %S' "$@" 2>/dev/null)
    end=$(now)
    local count; count=$(find "$dir" -type f -size 64k -not -name ".*" | wc -l)  # finished files only
    [ "$count" -eq "$FILES" ] || { echo "$* wrote $count files" >&2; exit 1; }
    printf '%.0f %.0f\n' "$(echo "($end - $start) * 1000" | bc -l)" "$(awk '{ print ($1 + $2) * 1000 }' "$BENCH_DIR/time.txt")"
}

printf '%-4s %8s %9s %9s %10s %11s %12s\n' run curl_ms curl_cpu floor_ms floor_cpu durable_ms durable_cpu
for f in cw cc fw fc dw dc rfw rfc rdw rdc; do : > "$BENCH_DIR/$f.txt"; done
keep() { echo "$2" >> "$BENCH_DIR/$1.txt"; }
for run in $(seq 0 "$RUNS"); do  # run 0: untimed
    read -r cw cc < <(measure "$BENCH_DIR/out/c$run" curl -s -Z --parallel-max 16 -K "$BENCH_DIR/curl.cfg")
    read -r fw fc < <(measure "$BENCH_DIR/out/f$run" "$BENCH_DIR/loop-floor" "http://127.0.0.1:$PORT/small/f" "$FILES" .)
    read -r dw dc < <(measure "$BENCH_DIR/out/d$run" "$BENCH_DIR/loop-floor" "http://127.0.0.1:$PORT/small/f" "$FILES" . \
        "$BENCH_DIR/state/floor.db")
    [ "$run" -eq 0 ] && continue
    printf '%-4s %8d %9d %9d %10d %11d %12d\n' "$run" "$cw" "$cc" "$fw" "$fc" "$dw" "$dc"
    keep cw "$cw"; keep cc "$cc"; keep fw "$fw"; keep fc "$fc"; keep dw "$dw"; keep dc "$dc"
    keep rfw "$(echo "$cw / $fw" | bc -l)"; keep rfc "$(echo "$fc / $cc" | bc -l)"
    keep rdw "$(echo "$cw / $dw" | bc -l)"; keep rdc "$(echo "$dc / $cc" | bc -l)"
done
m() { median < "$BENCH_DIR/$1.txt"; }
printf 'medians, wall / CPU: curl -Z %.0f / %.0f ms; floor %.0f / %.0f ms; durable floor %.0f / %.0f ms\n' \
    "$(m cw)" "$(m cc)" "$(m fw)" "$(m fc)" "$(m dw)" "$(m dc)"
printf 'median ratios: files/s floor / curl %.2f, durable floor / curl %.2f; CPU floor / curl %.2f, durable floor / curl %.2f\n' \
    "$(m rfw)" "$(m rdw)" "$(m rfc)" "$(m rdc)"
