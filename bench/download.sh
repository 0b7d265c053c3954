#!/usr/bin/env bash
# Downloads the same file from a local nginx with `curl -o`, `wget2` and
# transferd, alternating, RUNS times, and prints each run's throughput and the median ratios
# transferd / curl and transferd / wget2.
# transferd's time runs from `download` to `wait` returning: it includes the fsync and the
# atomic rename that make the file durable, which curl does not do. Each measurement starts
# after `sync`, so neither tool pays for the other's dirty pages. An untimed round of each tool
# comes first.
#   usage: bench/download.sh [SIZE_MIB=1024] [RUNS=7]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages wget2  # a peer this benchmark races
SIZE_MIB=${1:-1024}
RUNS=${2:-7}

build_release
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$BENCH_DIR/www/file.bin"
start_nginx
start_transferd
URL="http://127.0.0.1:$PORT/file.bin"
machine
echo "file: $SIZE_MIB MiB from nginx on 127.0.0.1, $RUNS runs each, alternating; $(wget2 --version | head -1 | cut -d' ' -f1-3)"

# MiB/s of the command in "$@", which writes $1 (removed, and the page cache synced, first).
rate() {
    local out=$1; shift
    rm -f "$BENCH_DIR/out/"*; sync
    local start end; start=$(now); "$@" || { echo "$* failed" >&2; exit 1; }; end=$(now)
    local size; size=$(stat -c %s "$out")
    [ "$size" -eq $((SIZE_MIB * 1024 * 1024)) ] || { echo "$1 wrote $size bytes" >&2; exit 1; }
    echo "$SIZE_MIB / ($end - $start)" | bc -l
}
transferd_download() {
    local id; id=$(ctl download "$URL" -o "$BENCH_DIR/out/transferd.bin")
    ctl wait "$id" >/dev/null || { ctl show "$id" >&2; tail -5 "$BENCH_DIR/logs/transferd.log" >&2; return 1; }
}

printf '%-4s %10s %10s %12s %10s %10s\n' run curl wget2 transferd "td/curl" "td/wget2"
: > "$BENCH_DIR/c.txt"; : > "$BENCH_DIR/w.txt"; : > "$BENCH_DIR/t.txt"; : > "$BENCH_DIR/rc.txt"; : > "$BENCH_DIR/rw.txt"
# Run 0 is not counted: curl's first download after the served file was made ran at 149-167
# MiB/s, a sixth to a quarter of its later runs, in each of three invocations (BENCHMARKS.md).
for run in $(seq 0 "$RUNS"); do
    c=$(rate "$BENCH_DIR/out/curl.bin" curl -sf -o "$BENCH_DIR/out/curl.bin" "$URL")
    w=$(rate "$BENCH_DIR/out/wget2.bin" wget2 -q --no-robots -O "$BENCH_DIR/out/wget2.bin" "$URL")
    t=$(rate "$BENCH_DIR/out/transferd.bin" transferd_download)
    [ "$run" -eq 0 ] && continue
    echo "$c" >> "$BENCH_DIR/c.txt"; echo "$w" >> "$BENCH_DIR/w.txt"; echo "$t" >> "$BENCH_DIR/t.txt"
    echo "$t / $c" | bc -l >> "$BENCH_DIR/rc.txt"
    echo "$t / $w" | bc -l >> "$BENCH_DIR/rw.txt"
    printf '%-4s %10.0f %10.0f %12.0f %10.2f %10.2f\n' "$run" "$c" "$w" "$t" "$(echo "$t / $c" | bc -l)" "$(echo "$t / $w" | bc -l)"
done
printf 'median MiB/s: curl %.0f, wget2 %.0f, transferd %.0f; median ratio to curl %.2f, to wget2 %.2f\n' \
    "$(median < "$BENCH_DIR/c.txt")" "$(median < "$BENCH_DIR/w.txt")" "$(median < "$BENCH_DIR/t.txt")" \
    "$(median < "$BENCH_DIR/rc.txt")" "$(median < "$BENCH_DIR/rw.txt")"
