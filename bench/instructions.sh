#!/usr/bin/env bash
# Instructions per small download, counted rather than timed: one batch of FILES × 64 KiB from a
# local nginx run by a transferd under callgrind (valgrind), after an untimed batch; prints the
# instructions per file of the whole daemon and of each stage a file passes through. On a
# shared VM where the wall-time ratios of bench/ab-smallfiles.sh swing ±20 % from minute to
# minute, these counts repeat to within a fraction of a percent, so a change of a few percent in
# the work done per file shows (what it does to the time still needs the timed benchmarks).
# Under callgrind everything runs some 50 times slower: group sizes and the order of events
# differ from a real run, so compare builds with this, not against curl.
#   usage: bench/instructions.sh [FILES=1000]   (BIN= picks the build)
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages valgrind
FILES=${1:-1000}

[ -x "$BIN/transferd" ] || build_release
small_files "$FILES"
# A kept BENCH_DIR of an earlier run: its files would be in the way of this run's downloads.
rm -rf "$BENCH_DIR"/out/* "$BENCH_DIR/callgrind.out"
start_nginx
TRANSFERD_UNDER="valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=$BENCH_DIR/callgrind.out" \
    start_transferd --max-active 16 --max-per-host 16
for run in 0 1; do
    for i in $(seq "$FILES"); do
        printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/%d/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$run" "$i"
    done > "$BENCH_DIR/small$run.jsonl"
    [ "$run" -eq 1 ] && callgrind_control -i on "$TRANSFERD_PID" >/dev/null 2>&1
    batch=$(ctl batch submit "$BENCH_DIR/small$run.jsonl" 2>/dev/null)
    ctl wait --batch "$batch" >/dev/null || { ctl batch show "$batch" >&2; exit 1; }
done
callgrind_control -i off "$TRANSFERD_PID" >/dev/null 2>&1
kill -TERM "$TRANSFERD_PID"; wait "$TRANSFERD_PID" 2>/dev/null || true; TRANSFERD_PID=

callgrind_annotate --inclusive=yes --threshold=100 "$BENCH_DIR/callgrind.out" 2>/dev/null | swift demangle --simplified --compact \
    > "$BENCH_DIR/inclusive.txt"
# One row of the table: NAME and instructions per file of COUNT.
row() { printf '  %-46s %9.0f\n' "$1" "$(echo "$2 / $FILES" | bc -l)"; }
# Instructions per file spent in a function and what it calls: the largest of its inclusive
# counts (callgrind lists a function once per source file its inlined code came from; a
# function whose body the compiler moved into a closure is listed as `closure #1 in` it).
stage() {
    local name=$1 function=$2 count
    count=$({ grep -F -- "$function" "$BENCH_DIR/inclusive.txt" || true; } | { grep -v '=>' || true; } \
        | awk -v f="$function" '{ line = $0; sub(/ \[[^]]*\]$/, "", line)
                                  tail = substr(line, length(line) - length(f))
                                  if (tail == ":" f || tail == " " f) { gsub(",", "", $1); if ($1 + 0 > max) max = $1 + 0 } }
                                END { print max + 0 }')
    row "$name" "$count"
}
total=$(grep -m1 'PROGRAM TOTALS' "$BENCH_DIR/inclusive.txt" | awk '{ gsub(",", "", $1); print $1 }')
echo "transferd $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'); $FILES files of 64 KiB, one batch"
echo "instructions per file (a stage includes what it calls):"
row "whole daemon" "$total"
stage "loop: the submit's requests decoded" 'ControlServer.handle(_:on:)'
stage "loop: libcurl and its callbacks" 'curl_multi_socket_action'
stage "loop: answers from other threads" 'specialized closure #1 in LoopInbox.init(loop:context:)'
stage "loop: the decision core" 'SchedulerCore.handle(_:now:)'
stage "loop: response heads parsed" 'ResponseHeadParser.consume(_:)'
stage "store: its queue (SQLite, records)" 'StoreQueue.drain(window:)'
stage "store: the batch's jobs queued" 'BatchQueueing.queue(_:checks:defaultRetries:in:)'
stage "store: attempts recorded as begun" 'AttemptBegin.write(to:)'
stage "store: state changes recorded" 'StateRecord.write(to:)'
stage "files: partial files opened" 'static AttemptPreparation.open(_:)'
stage "files: finishing groups" 'FinishGroup.drain()'
