#!/usr/bin/env bash
# Crash test: queues a mix of downloads (slow, fast, small, range-ignoring) and uploads
# (multipart and raw, to bench/sink.py, which logs how many body bytes arrived), kills transferd
# with SIGKILL at random moments KILLS times, restarting it each time, then checks that every
# job completed with the source's sha256, every upload arrived complete at least once, no
# destination ever held a partial file, the database passes `PRAGMA integrity_check`, and how
# many bytes nginx sent in excess.
#   usage: bench/crash.sh [KILLS=25] [JOBS=12]
source "$(dirname "$0")/lib.sh"
KILLS=${1:-25}
JOBS=${2:-12}

build_release
start_nginx "location /slow/ { alias $BENCH_DIR/www/; limit_rate 4m; }
    location /norange/ { alias $BENCH_DIR/www/; max_ranges 0; limit_rate 8m; }
    access_log $BENCH_DIR/logs/access.log;"
SINK_PORT=$((PORT + 1))
/usr/bin/python3 "$ROOT/bench/sink.py" "$SINK_PORT" "$BENCH_DIR/logs/sink.log" &
start_transferd --max-active 6
machine
ids=()
for n in $(seq "$JOBS"); do
    case $((n % 4)) in
        0) size=$((24 * 1024 * 1024)); location=slow ;;
        1) size=$((64 * 1024)); location=slow ;;
        2) size=$((8 * 1024 * 1024 + n)); location=norange ;;
        3) size=$((96 * 1024 * 1024)); location="" ;;
    esac
    head -c "$size" /dev/urandom > "$BENCH_DIR/www/f$n.bin"
    ids+=("$(ctl download "http://127.0.0.1:$PORT/${location:+$location/}f$n.bin" -o "$BENCH_DIR/out/f$n.bin")")
done
total_bytes=$(du -cb "$BENCH_DIR"/www/f*.bin | tail -1 | cut -f1)
for n in 1 2 3 4; do
    head -c $((16 * 1024 * 1024 + n)) /dev/urandom > "$BENCH_DIR/up$n.bin"
    if [ $((n % 2)) = 0 ]; then
        ids+=("$(ctl upload "http://127.0.0.1:$SINK_PORT/up$n" -T "$BENCH_DIR/up$n.bin" --limit-rate 8M)")
    else
        ids+=("$(ctl upload "http://127.0.0.1:$SINK_PORT/up$n" -F "file=@$BENCH_DIR/up$n.bin" -F n=$n --limit-rate 8M)")
    fi
done

for kill in $(seq "$KILLS"); do
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.05 + (r % 100) / 100 }')"
    kill -9 "$TRANSFERD_PID"; wait "$TRANSFERD_PID" 2>/dev/null || true
    for n in $(seq "$JOBS"); do
        out="$BENCH_DIR/out/f$n.bin"
        if [ -e "$out" ] && ! cmp -s "$out" "$BENCH_DIR/www/f$n.bin"; then
            echo "FAIL: kill $kill: $out exists but differs from its source" >&2; exit 1
        fi
    done
    start_transferd --max-active 6
done

if ! ctl wait "${ids[@]}" --timeout 300 >/dev/null; then
    ctl list >&2; ctl list --state failed --json | grep -m3 message >&2; echo "FAIL: not every job completed" >&2; exit 1
fi
for n in $(seq "$JOBS"); do
    cmp -s "$BENCH_DIR/out/f$n.bin" "$BENCH_DIR/www/f$n.bin" || { echo "FAIL: f$n.bin differs" >&2; exit 1; }
done
for n in 1 2 3 4; do  # the sink logs: METHOD PATH CONTENT_LENGTH BYTES_READ
    awk -v p="/up$n" '$2 == p && $3 == $4 && $3 > 16777216 { ok = 1 } END { exit !ok }' "$BENCH_DIR/logs/sink.log" \
        || { echo "FAIL: upload up$n never arrived complete" >&2; exit 1; }
done
kill "$TRANSFERD_PID"; wait "$TRANSFERD_PID" 2>/dev/null || true; TRANSFERD_PID=
integrity=$(sqlite3 "$BENCH_DIR/state/transfers.db" 'PRAGMA integrity_check')
[ "$integrity" = ok ] || { echo "FAIL: integrity_check: $integrity" >&2; exit 1; }
sent=$(awk '{ sum += $10 } END { print sum }' "$BENCH_DIR/logs/access.log")
echo "$KILLS kills, $JOBS downloads and 4 uploads: all completed, sha256 identical, uploads complete, integrity_check ok"
printf 'bytes sent by nginx: %d for %d of files; excess %.1f MiB (%.1f MiB per kill)\n' \
    "$sent" "$total_bytes" "$(echo "($sent - $total_bytes) / 1048576" | bc -l)" \
    "$(echo "($sent - $total_bytes) / 1048576 / $KILLS" | bc -l)"
