#!/usr/bin/env bash
# Uploads the same file as multipart/form-data with `curl -F` and with transferd to the same
# local endpoint (bench/sink.py, which reads every body byte and logs the count), alternating,
# RUNS times; prints both throughputs, the median ratio, and transferd's peak RSS for the
# upload (VmHWM, reset before each run) so that memory can be compared across file sizes.
#   usage: bench/upload.sh [SIZE_MIB=1024] [RUNS=5]
source "$(dirname "$0")/lib.sh"
SIZE_MIB=${1:-1024}
RUNS=${2:-5}

build_release
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$BENCH_DIR/www/file.bin"
/usr/bin/python3 "$ROOT/bench/sink.py" "$PORT" "$BENCH_DIR/logs/sink.log" &
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.05; done
start_transferd
URL="http://127.0.0.1:$PORT/upload"
machine
echo "file: $SIZE_MIB MiB as one multipart part to a local sink, $RUNS runs each, alternating"
runs_header curl MiB/s peak_RSS_MiB
: > "$BENCH_DIR/rss.txt"
expect_read() {  # the sink read every byte of the last request
    local last; last=$(tail -1 "$BENCH_DIR/logs/sink.log")
    set -- $last
    [ "$3" = "$4" ] && [ "$3" -gt $((SIZE_MIB * 1024 * 1024)) ] || { echo "sink read $4 of $3 bytes" >&2; exit 1; }
}
for run in $(seq "$RUNS"); do
    sync
    start=$(now); curl -sf -F "file=@$BENCH_DIR/www/file.bin" "$URL" >/dev/null; end=$(now)
    expect_read
    curl_rate=$(echo "$SIZE_MIB / ($end - $start)" | bc -l)
    sync
    echo 5 > "/proc/$TRANSFERD_PID/clear_refs"  # reset VmHWM
    start=$(now)
    id=$(ctl upload "$URL" -F "file=@$BENCH_DIR/www/file.bin")
    ctl wait "$id" >/dev/null || { ctl show "$id" >&2; exit 1; }
    end=$(now)
    expect_read
    rss=$(awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$TRANSFERD_PID/status")
    td_rate=$(echo "$SIZE_MIB / ($end - $start)" | bc -l)
    echo "$rss" >> "$BENCH_DIR/rss.txt"
    run_row "$run" "$curl_rate" "$td_rate" "$rss"
done
runs_medians curl MiB/s; printf '; transferd peak RSS %s MiB (max of runs)\n' "$(sort -g "$BENCH_DIR/rss.txt" | tail -1)"
