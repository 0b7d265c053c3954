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
printf '%-4s %12s %15s %8s %14s\n' run curl_MiB/s transferd_MiB/s ratio peak_RSS_MiB
: > "$BENCH_DIR/curl.txt"; : > "$BENCH_DIR/transferd.txt"; : > "$BENCH_DIR/ratio.txt"; : > "$BENCH_DIR/rss.txt"
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
    ratio=$(echo "$td_rate / $curl_rate" | bc -l)
    echo "$curl_rate" >> "$BENCH_DIR/curl.txt"; echo "$td_rate" >> "$BENCH_DIR/transferd.txt"
    echo "$ratio" >> "$BENCH_DIR/ratio.txt"; echo "$rss" >> "$BENCH_DIR/rss.txt"
    printf '%-4s %12.0f %15.0f %8.2f %14s\n' "$run" "$curl_rate" "$td_rate" "$ratio" "$rss"
done
printf 'median: curl %.0f MiB/s, transferd %.0f MiB/s, ratio %.2f; transferd peak RSS %s MiB (max of runs)\n' \
    "$(median < "$BENCH_DIR/curl.txt")" "$(median < "$BENCH_DIR/transferd.txt")" "$(median < "$BENCH_DIR/ratio.txt")" \
    "$(sort -g "$BENCH_DIR/rss.txt" | tail -1)"
