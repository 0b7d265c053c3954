#!/usr/bin/env bash
# Downloads the same file from a local nginx with `curl -o` and with transferd, alternating,
# RUNS times, and prints each run's throughput and the median ratio transferd / curl.
# transferd's time runs from `download` to `wait` returning: it includes the fsync and the
# atomic rename that make the file durable, which curl does not do. Each measurement starts
# after `sync`, so neither tool pays for the other's dirty pages.
#   usage: bench/download.sh [SIZE_MIB=1024] [RUNS=7]
source "$(dirname "$0")/lib.sh"
SIZE_MIB=${1:-1024}
RUNS=${2:-7}

build_release
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$BENCH_DIR/www/file.bin"
start_nginx
start_transferd
URL="http://127.0.0.1:$PORT/file.bin"
machine
echo "file: $SIZE_MIB MiB from nginx on 127.0.0.1, $RUNS runs each, alternating"
runs_header curl MiB/s
for run in $(seq "$RUNS"); do
    rm -f "$BENCH_DIR/out/"*; sync
    start=$(now); curl -sf -o "$BENCH_DIR/out/curl.bin" "$URL"; end=$(now)
    curl_rate=$(echo "$SIZE_MIB / ($end - $start)" | bc -l)
    size=$(stat -c %s "$BENCH_DIR/out/curl.bin")
    [ "$size" -eq $((SIZE_MIB * 1024 * 1024)) ] || { echo "curl wrote $size bytes" >&2; exit 1; }
    rm -f "$BENCH_DIR/out/"*; sync
    start=$(now)
    id=$(ctl download "$URL" -o "$BENCH_DIR/out/transferd.bin")
    ctl wait "$id" >/dev/null || { ctl show "$id" >&2; tail -5 "$BENCH_DIR/logs/transferd.log" >&2; exit 1; }
    end=$(now)
    td_rate=$(echo "$SIZE_MIB / ($end - $start)" | bc -l)
    size=$(stat -c %s "$BENCH_DIR/out/transferd.bin")
    [ "$size" -eq $((SIZE_MIB * 1024 * 1024)) ] || { echo "transferd wrote $size bytes" >&2; exit 1; }
    run_row "$run" "$curl_rate" "$td_rate"
done
runs_medians curl MiB/s; echo
