#!/usr/bin/env bash
# Two transferd builds against each other on many small files: each with its own daemon
# (--max-active 16 --max-per-host 16) on one nginx, runs alternating A, B, A, B, ...; prints
# files per second and the daemon's CPU time (user + system) for each run, then both builds'
# medians and the median of the paired ratios B/A (each B run over the A run before it) with
# their range. A round of both, untimed, comes first (the first files after a large deletion
# pay ext4's inode scans). Each run's steal time is printed too (lib.sh `steal_ms`), and the
# paired ratio again over the pairs where neither run lost 5 % of its core time to it.
#   usage: bench/ab-smallfiles.sh DIR_A DIR_B [RUNS=4] [FILES=2000]
#   (DIR_A, DIR_B: directories holding a transferd and a transferctl, e.g. copies of
#   .build/release taken before and after a change)
source "$(dirname "$0")/lib.sh"
A=$1; B=$2; RUNS=${3:-4}; FILES=${4:-2000}
fresh_inodes
small_files "$FILES"
start_nginx
for i in $(seq "$FILES"); do
    printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/RUN/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$i"
done > "$BENCH_DIR/small.jsonl"
declare -A PIDS
for side in A B; do
    dir=${!side}; mkdir -p "$BENCH_DIR/state$side"
    "$dir/transferd" --state-dir "$BENCH_DIR/state$side" --max-active 16 --max-per-host 16 2>>"$BENCH_DIR/logs/td$side.log" &
    PIDS[$side]=$!
    for _ in $(seq 100); do "$dir/transferctl" --state-dir "$BENCH_DIR/state$side" stats >/dev/null 2>&1 && break; sleep 0.05; done
done
machine
: > "$BENCH_DIR/rateA"; : > "$BENCH_DIR/rateB"; : > "$BENCH_DIR/cpuA"; : > "$BENCH_DIR/cpuB"; : > "$BENCH_DIR/pairs"
: > "$BENCH_DIR/calm_pairs"; declare -A CALM
for run in $(seq 0 "$RUNS"); do  # run 0: untimed
    for side in A B; do
        dir=${!side}; ctl=("$dir/transferctl" --state-dir "$BENCH_DIR/state$side")
        sed "s|/out/RUN/|/out/$side$run/|" "$BENCH_DIR/small.jsonl" > "$BENCH_DIR/s.jsonl"; mkdir -p "$BENCH_DIR/out/$side$run"; settle "${ctl[@]}" stats
        pid=${PIDS[$side]}; cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat"); stolen=$(steal_ms)
        start=$(now)
        batch=$("${ctl[@]}" batch submit "$BENCH_DIR/s.jsonl" 2>/dev/null)
        "${ctl[@]}" wait --batch "$batch" >/dev/null 2>&1 || echo "$side: the batch did not complete" >&2
        end=$(now); cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat"); stolen=$(( $(steal_ms) - stolen ))
        [ "$run" -eq 0 ] && continue
        rate=$(echo "$FILES / ($end - $start)" | bc -l); cpu=$(( (cpu1 - cpu0) * 1000 / $(getconf CLK_TCK) ))
        echo "$rate" >> "$BENCH_DIR/rate$side"; echo "$cpu" >> "$BENCH_DIR/cpu$side"
        CALM[$side]=yes; quiet "$stolen" "$(echo "$end - $start" | bc -l)" || CALM[$side]=no
        printf '%s run %d: %.0f files/s, daemon CPU %d ms, steal %d ms%s\n' "$side" "$run" "$rate" "$cpu" "$stolen" \
            "$([ "${CALM[$side]}" = yes ] || echo ' (not calm)')"
    done
    [ "$run" -eq 0 ] && continue
    pair=$(echo "$(tail -1 "$BENCH_DIR/rateB") / $(tail -1 "$BENCH_DIR/rateA")" | bc -l)
    echo "$pair" >> "$BENCH_DIR/pairs"
    if [ "${CALM[A]}${CALM[B]}" = yesyes ]; then echo "$pair" >> "$BENCH_DIR/calm_pairs"; fi
done
printf 'median files/s: A %.0f, B %.0f; daemon CPU per batch: A %.0f ms, B %.0f ms; paired ratio B/A %.3f (%.3f-%.3f)\n' \
    "$(median < "$BENCH_DIR/rateA")" "$(median < "$BENCH_DIR/rateB")" "$(median < "$BENCH_DIR/cpuA")" "$(median < "$BENCH_DIR/cpuB")" \
    "$(median < "$BENCH_DIR/pairs")" "$(sort -g "$BENCH_DIR/pairs" | head -1)" "$(sort -g "$BENCH_DIR/pairs" | tail -1)"
if [ -s "$BENCH_DIR/calm_pairs" ]; then
    printf 'paired ratio B/A over the %d pairs where neither run lost 5 %% of its core time to steal: %.3f\n' \
        "$(wc -l < "$BENCH_DIR/calm_pairs")" "$(median < "$BENCH_DIR/calm_pairs")"
else
    echo "no pair was calm (in each, a run lost 5 % or more of its core time to steal): rerun on a quieter machine"
fi
kill "${PIDS[A]}" "${PIDS[B]}"
