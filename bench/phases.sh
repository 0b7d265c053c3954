#!/usr/bin/env bash
# Where a batch of small files spends its time, from the server's side: nginx logs the moment
# each request ends ($msec), and for `curl -Z --parallel-max 16` and a transferd batch
# (`batch submit` + `wait --batch`, --max-active 16 --max-per-host 16), alternating on the same
# FILES × 64 KiB, it prints per run, in ms from the command's start:
#   start   the first request served (curl: its start and config; transferd: the CLI, the
#           manifest sent and checked, the queueing transaction, the first attempt prepared);
#   middle  from the end of the first 10 % of the requests to the start of the last 10 % (the
#           transfers in full flight);
#   last    the last request served;
#   tail    from the last request to the command's end (transferd: the last files made
#           durable and renamed, their jobs recorded, `wait` answered);
# then the medians of each, and transferd's over curl's for the start and the middle. Each run
# starts after `settle` (lib.sh); an untimed round of both comes first.
#   usage: bench/phases.sh [RUNS=5] [FILES=2000]
source "$(dirname "$0")/lib.sh"
RUNS=${1:-5}
FILES=${2:-2000}

build_release
fresh_inodes
small_files "$FILES"
start_nginx "access_log $BENCH_DIR/logs/ends.log ends;" 'log_format ends "$msec $http_user_agent"; keepalive_requests 1000000;'
start_transferd --max-active 16 --max-per-host 16
machine
curl_config "$FILES"

# "start middle last tail" (ms) of the requests whose user agent matches $3, for a command that
# ran from $1 to $2 (ms since the epoch).
phases() {
    awk -v s="$1" -v e="$2" -v agent="$3" '$0 ~ agent { n++; t[n] = $1 * 1000 - s }
        END { printf "%.0f %.0f %.0f %.0f\n", t[1], t[int(n * 0.9)] - t[int(n * 0.1) + 1], t[n], e - s - t[n] }' \
        "$BENCH_DIR/logs/ends.log"
}
ms() { date +%s%3N; }

printf '%-4s %-10s %8s %8s %8s %8s\n' run tool start middle last tail
: > "$BENCH_DIR/curl.txt"; : > "$BENCH_DIR/td.txt"
for run in $(seq 0 "$RUNS"); do
    mkdir -p "$BENCH_DIR/out/curl$run"; settle curl --version; : > "$BENCH_DIR/logs/ends.log"
    s=$(ms); (cd "$BENCH_DIR/out/curl$run" && curl -s -Z --parallel-max 16 -K "$BENCH_DIR/curl.cfg" 2>/dev/null); e=$(ms)
    c=$(phases "$s" "$e" curl)
    for i in $(seq "$FILES"); do
        printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/td%d/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$run" "$i"
    done > "$BENCH_DIR/small.jsonl"
    settle ctl stats; : > "$BENCH_DIR/logs/ends.log"
    s=$(ms); batch=$(ctl batch submit "$BENCH_DIR/small.jsonl" 2>/dev/null); ctl wait --batch "$batch" >/dev/null; e=$(ms)
    t=$(phases "$s" "$e" transferd)
    [ "$(grep -c transferd "$BENCH_DIR/logs/ends.log")" -eq "$FILES" ] || { echo "transferd made $(grep -c transferd "$BENCH_DIR/logs/ends.log") requests" >&2; exit 1; }
    [ "$run" -eq 0 ] && continue
    echo "$c" >> "$BENCH_DIR/curl.txt"; echo "$t" >> "$BENCH_DIR/td.txt"
    printf '%-4s %-10s %8s %8s %8s %8s\n' "$run" curl $c "$run" transferd $t
done
column() { cut -d' ' -f"$2" "$BENCH_DIR/$1.txt" | median; }
printf 'medians (ms): curl -Z start %.0f, middle %.0f, tail %.0f, whole %.0f; transferd start %.0f, middle %.0f, tail %.0f, whole %.0f\n' \
    "$(column curl 1)" "$(column curl 2)" "$(column curl 4)" "$(echo "$(column curl 3) + $(column curl 4)" | bc)" \
    "$(column td 1)" "$(column td 2)" "$(column td 4)" "$(echo "$(column td 3) + $(column td 4)" | bc)"
printf 'transferd / curl -Z: start %.2f, middle %.2f (the same 80 %% of the files)\n' \
    "$(echo "$(column td 1) / $(column curl 1)" | bc -l)" "$(echo "$(column td 2) / $(column curl 2)" | bc -l)"
