#!/usr/bin/env bash
# Crash test of many small files finishing in groups: a batch of FILES downloads of SIZE_KIB
# from a local nginx (--max-active 16 --max-per-host 16, 4 MiB/s in all), the daemon killed with SIGKILL KILLS
# times at random moments 0.05–0.5 s apart and restarted. After each kill no destination may
# exist unless it equals its source; at the end every job must be completed with its file
# identical to its source, and the database must pass `PRAGMA integrity_check`.
#   usage: bench/crash-batch.sh [KILLS=20] [FILES=2000] [SIZE_KIB=64]
source "$(dirname "$0")/lib.sh"
KILLS=${1:-20}
FILES=${2:-2000}
SIZE_KIB=${3:-64}

build_release
mkdir -p "$BENCH_DIR/out"
small_files "$FILES" "$SIZE_KIB"
start_nginx
start_transferd --max-active 16 --max-per-host 16
# A global limit (kept across restarts) spreads the batch over the kills: every kill lands in it.
ctl limit --down 4M >/dev/null
machine
for i in $(seq "$FILES"); do
    printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$i"
done > "$BENCH_DIR/batch.jsonl"
batch=$(ctl batch submit "$BENCH_DIR/batch.jsonl" 2>/dev/null)

# Every destination that exists must be whole: nothing reaches it before its bytes are durable.
check_destinations() {
    for i in $(seq "$FILES"); do
        out="$BENCH_DIR/out/f$i"
        if [ -e "$out" ] && ! cmp -s "$out" "$BENCH_DIR/www/small/f$i"; then
            echo "FAIL: $1: $out exists but differs from its source" >&2; exit 1
        fi
    done
}

at_kills=()
for kill in $(seq "$KILLS"); do
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.05 + (r % 46) / 100 }')"
    done_before=$(find "$BENCH_DIR/out" -maxdepth 1 -name 'f*' | wc -l)
    kill -9 "$TRANSFERD_PID"; wait "$TRANSFERD_PID" 2>/dev/null || true
    check_destinations "kill $kill (with $done_before files in place)"
    at_kills+=("$done_before")
    start_transferd --max-active 16 --max-per-host 16
done

if ! ctl wait --batch "$batch" --timeout 600 >/dev/null; then
    ctl batch show "$batch" >&2; echo "FAIL: not every job completed" >&2; exit 1
fi
check_destinations "the end"
count=$(find "$BENCH_DIR/out" -maxdepth 1 -name 'f*' | wc -l)
[ "$count" -eq "$FILES" ] || { echo "FAIL: $count of $FILES files in place" >&2; exit 1; }
completed=$(ctl batch show "$batch" --json | grep -o '"completed" *: *[0-9]*' | grep -o '[0-9]*$')
[ "$completed" -eq "$FILES" ] || { echo "FAIL: $completed of $FILES jobs completed" >&2; exit 1; }
kill "$TRANSFERD_PID"; wait "$TRANSFERD_PID" 2>/dev/null || true; TRANSFERD_PID=
integrity=$(sqlite3 "$BENCH_DIR/state/transfers.db" 'PRAGMA integrity_check')
[ "$integrity" = ok ] || { echo "FAIL: integrity_check: $integrity" >&2; exit 1; }
echo "files in place at each kill: ${at_kills[*]}"
echo "$KILLS kills during a batch of $FILES x $SIZE_KIB KiB: every job completed, every file identical, integrity_check ok"
