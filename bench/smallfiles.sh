#!/usr/bin/env bash
# Many small files from a local nginx, at equal parallelism (16 at once): `curl -Z
# --parallel-max 16`, `aria2c -j 16` and transferd (`batch submit`, --max-active 16
# --max-per-host 16, until `wait --batch` returns), alternating, RUNS times. Prints files per
# second for each and the median ratios transferd / curl and transferd / aria2c. Every transferd
# file is durable (fsynced, renamed, its directory fsynced) and every job recorded before `wait`
# returns; curl and aria2c sync nothing. Each measurement starts after `settle` (lib.sh): every
# dirty page written, and as root the page cache dropped and the served files read back in. An
# untimed round of each tool comes first. The steal time of each curl and transferd run is
# printed (lib.sh `steal_ms`; * where it took 5 % or more of the run's core time), and the
# median ratio again over the runs where neither lost that much. aria2c runs without its control
# files (`--auto-save-interval=0`): it wrote, renamed and deleted one per download, and the
# 2,000 inodes it freed were scanned past by the next tool's creates (ext4 without a journal,
# lib.sh `fresh_inodes`) — transferd's, which follows it in each round (BENCHMARKS.md).
#   usage: bench/smallfiles.sh [FILES=2000] [SIZE_KIB=64] [RUNS=5]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages aria2  # a peer this benchmark races
FILES=${1:-2000}
SIZE_KIB=${2:-64}
RUNS=${3:-5}

build_release
fresh_inodes
small_files "$FILES" "$SIZE_KIB"
# Each request's connection number, to count the connections each tool opened. nginx closes a
# connection after 1,000 requests unless told otherwise: transferd keeps its 16 between runs
# (16,000 requests in eight), curl and aria2c open theirs afresh each run.
start_nginx "access_log $BENCH_DIR/logs/conn.log conn;" 'log_format conn "$connection $http_user_agent"; keepalive_requests 1000000;'
start_transferd --max-active 16 --max-per-host 16
machine
echo "aria2c: $(aria2c --version | head -1); files: $FILES x $SIZE_KIB KiB, $RUNS runs, alternating"

curl_config "$FILES"
for i in $(seq "$FILES"); do echo "http://127.0.0.1:$PORT/small/f$i"; done > "$BENCH_DIR/list.txt"
for i in $(seq "$FILES"); do
    printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/td/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$i"
done > "$BENCH_DIR/small.jsonl"  # out/td/ becomes each run's own directory

# Files per second of the command in "$@", run in the new directory $1; checks the count. Nothing
# is deleted until the end: ext4 skips inodes freed in the last minutes when it allocates one
# (`recently_deleted`), so a tool writing right after an `rm -rf` pays a scan the others may not.
rate() {
    local dir=$1; shift
    mkdir -p "$dir"; settle load_tools
    local start end stolen; stolen=$(steal_ms); start=$(now); (cd "$dir" && "$@" 2>/dev/null); end=$(now)
    stolen=$(( $(steal_ms) - stolen ))
    local count; count=$(find "$dir" -type f -size "${SIZE_KIB}k" | wc -l)
    [ "$count" -eq "$FILES" ] || { echo "$* wrote $count files" >&2; exit 1; }
    echo "$stolen $(echo "$end - $start" | bc -l)" > "$dir.steal"
    echo "$FILES / ($end - $start)" | bc -l
}
# calm RUN_DIR: the run that wrote RUN_DIR lost under 5 % of its core time to steal (lib.sh `quiet`).
calm() { quiet $(cat "$1.steal"); }
# steal RUN_DIR: that run's steal in ms, with a * when it was not calm.
steal() { printf '%s%s' "$(cut -d' ' -f1 "$1.steal")" "$(calm "$1" || echo '*')"; }
load_tools() { curl --version; aria2c --version; ctl stats; }
transferd_batch() {
    local batch; batch=$(ctl batch submit "$BENCH_DIR/small$run.jsonl" 2>/dev/null)
    ctl wait --batch "$batch" >/dev/null || { ctl batch show "$batch" >&2; exit 1; }
}

printf '%-4s %10s %10s %12s %10s %10s %16s\n' run curl aria2c transferd "td/curl" "td/aria2c" "steal_ms c/td"
: > "$BENCH_DIR/r_curl.txt"; : > "$BENCH_DIR/r_aria.txt"; : > "$BENCH_DIR/td.txt"; : > "$BENCH_DIR/c.txt"; : > "$BENCH_DIR/a.txt"
: > "$BENCH_DIR/r_calm.txt"
# Run 0 is not counted: the first files written after a large deletion (an earlier benchmark's)
# pay the file system's scans of recently freed inodes; curl -Z measured 1,484 and 1,522 files/s
# in such first runs and 5,500-8,600 in the runs after (BENCHMARKS.md).
for run in $(seq 0 "$RUNS"); do
    c=$(rate "$BENCH_DIR/out/curl$run" curl -s -Z --parallel-max 16 -K "$BENCH_DIR/curl.cfg")
    a=$(rate "$BENCH_DIR/out/aria$run" aria2c -q -i "$BENCH_DIR/list.txt" -j 16 --file-allocation=none --auto-save-interval=0)
    sed "s|/out/td/|/out/td$run/|" "$BENCH_DIR/small.jsonl" > "$BENCH_DIR/small$run.jsonl"  # not timed
    t=$(rate "$BENCH_DIR/out/td$run" transferd_batch)
    [ "$run" -eq 0 ] && continue
    echo "$c" >> "$BENCH_DIR/c.txt"; echo "$a" >> "$BENCH_DIR/a.txt"; echo "$t" >> "$BENCH_DIR/td.txt"
    echo "$t / $c" | bc -l >> "$BENCH_DIR/r_curl.txt"; echo "$t / $a" | bc -l >> "$BENCH_DIR/r_aria.txt"
    if calm "$BENCH_DIR/out/curl$run" && calm "$BENCH_DIR/out/td$run"; then echo "$t / $c" | bc -l >> "$BENCH_DIR/r_calm.txt"; fi
    printf '%-4s %10.0f %10.0f %12.0f %10.2f %10.2f %16s\n' "$run" "$c" "$a" "$t" "$(echo "$t / $c" | bc -l)" "$(echo "$t / $a" | bc -l)" \
        "$(steal "$BENCH_DIR/out/curl$run")/$(steal "$BENCH_DIR/out/td$run")"
done
# Connections per tool (the last run's requests): reuse per host means at most 16 for 16 at once.
for tool in curl aria2 transferd; do
    printf '%s: %s connections for the last %d requests\n' "$tool" \
        "$(grep -i "$tool" "$BENCH_DIR/logs/conn.log" | tail -n "$FILES" | cut -d' ' -f1 | sort -u | wc -l)" "$FILES"
done
printf 'median files/s: curl -Z %.0f, aria2c %.0f, transferd %.0f; median ratio to curl -Z %.2f, to aria2c %.2f\n' \
    "$(median < "$BENCH_DIR/c.txt")" "$(median < "$BENCH_DIR/a.txt")" "$(median < "$BENCH_DIR/td.txt")" \
    "$(median < "$BENCH_DIR/r_curl.txt")" "$(median < "$BENCH_DIR/r_aria.txt")"
if [ -s "$BENCH_DIR/r_calm.txt" ]; then
    printf 'median ratio to curl -Z over the %d runs where neither lost 5 %% of its core time to steal: %.2f\n' \
        "$(wc -l < "$BENCH_DIR/r_calm.txt")" "$(median < "$BENCH_DIR/r_calm.txt")"
else
    echo "no run was calm (each lost 5 % or more of its core time to steal): rerun on a quieter machine"
fi
