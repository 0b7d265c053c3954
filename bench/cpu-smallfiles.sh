#!/usr/bin/env bash
# CPU per file rather than files per second: the same 2,000-file batch as bench/smallfiles.sh
# (16 at once, from a local nginx), `curl -Z --parallel-max 16` and transferd (`batch submit`
# until `wait --batch` returns) alternating, RUNS times. For each run it prints the wall time and
# the CPU (user + system) of:
#   - curl's process;
#   - transferd's: the daemon, its threads that ended included (/proc/PID/stat), plus the two
#     transferctl processes;
#   - nginx's worker, serving either one;
#   - transferd's loop thread: its time on a core and its time runnable but waiting for one
#     (/proc/PID/task/PID/schedstat; the loop is the batch's serial path, BENCHMARKS.md).
# Then the medians, in µs per file, and the ratio transferd / curl.
#
# Both tools share two cores with nginx and are short of CPU, so the work each does per file is
# what sets the gap in files per second. On a shared VM the CPU a run takes varies too (a run
# that waits on a busy neighbour costs more): compare medians of several runs.
#   usage: bench/cpu-smallfiles.sh [RUNS=5] [FILES=2000]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages time
RUNS=${1:-5}
FILES=${2:-2000}

build_release
fresh_inodes
small_files "$FILES"
start_nginx '' 'keepalive_requests 1000000;'
start_transferd --max-active 16 --max-per-host 16
machine
curl_config "$FILES"

ticks() { awk '{ print $14 + $15 }' "$1"; }                    # user + system, in clock ticks
nginx_ticks() { local t=0; for p in $(pgrep -f "nginx: worker" || true); do t=$((t + $(ticks "/proc/$p/stat"))); done; echo "$t"; }
ms() { echo $(( $1 * 1000 / $(getconf CLK_TCK) )); }
timed() { /usr/bin/time -a -o "$BENCH_DIR/cli.txt" -f '%U %S' "$@"; }  # a process's CPU, appended
cli_ms() { awk '{ s += $1 + $2 } END { printf "%d", s * 1000 }' "$BENCH_DIR/cli.txt"; }
loop_ns() { cut -d' ' -f1,2 "/proc/$TRANSFERD_PID/task/$TRANSFERD_PID/schedstat"; }  # on a core, waiting (ns)

# Milliseconds: each tool's wall time and CPU, nginx's CPU while serving it, transferctl's CPU.
printf '%-4s %8s %9s %11s %13s %11s %12s %12s %9s %10s\n' run curl curl_cpu nginx_curl transferd daemon_cpu transferctl nginx_td \
    loop_run loop_wait
: > "$BENCH_DIR/c.txt"; : > "$BENCH_DIR/t.txt"; : > "$BENCH_DIR/r.txt"
for run in $(seq 0 "$RUNS"); do  # run 0: untimed
    mkdir -p "$BENCH_DIR/out/c$run"; settle curl --version
    : > "$BENCH_DIR/cli.txt"; n0=$(nginx_ticks); start=$(now)
    (cd "$BENCH_DIR/out/c$run" && timed curl -s -Z --parallel-max 16 -K "$BENCH_DIR/curl.cfg" 2>/dev/null)
    end=$(now); n1=$(nginx_ticks)
    curl_wall=$(echo "($end - $start) * 1000" | bc -l); curl_cpu=$(cli_ms); curl_nginx=$(ms $((n1 - n0)))

    for i in $(seq "$FILES"); do
        printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/t%d/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$run" "$i"
    done > "$BENCH_DIR/m.jsonl"
    settle ctl stats
    : > "$BENCH_DIR/cli.txt"; d0=$(ticks "/proc/$TRANSFERD_PID/stat"); n0=$(nginx_ticks); l0=$(loop_ns); start=$(now)
    batch=$(timed "$BIN/transferctl" --state-dir "$BENCH_DIR/state" batch submit "$BENCH_DIR/m.jsonl" 2>/dev/null)
    timed "$BIN/transferctl" --state-dir "$BENCH_DIR/state" wait --batch "$batch" >/dev/null || { ctl batch show "$batch" >&2; exit 1; }
    end=$(now); d1=$(ticks "/proc/$TRANSFERD_PID/stat"); n1=$(nginx_ticks); l1=$(loop_ns)
    td_wall=$(echo "($end - $start) * 1000" | bc -l); td_cpu=$(ms $((d1 - d0))); td_cli=$(cli_ms)
    [ "$run" -eq 0 ] && continue

    printf '%-4s %8.0f %9d %11d %13.0f %11d %12d %12d %9s %10s\n' "$run" "$curl_wall" "$curl_cpu" "$curl_nginx" \
        "$td_wall" "$td_cpu" "$td_cli" "$(ms $((n1 - n0)))" \
        $(echo "$l0 $l1" | awk '{ printf "%.0f %.0f", ($3 - $1) / 1e6, ($4 - $2) / 1e6 }')
    c=$(echo "$curl_cpu * 1000 / $FILES" | bc -l); t=$(echo "($td_cpu + $td_cli) * 1000 / $FILES" | bc -l)
    echo "$c" >> "$BENCH_DIR/c.txt"; echo "$t" >> "$BENCH_DIR/t.txt"; echo "$t / $c" | bc -l >> "$BENCH_DIR/r.txt"
done
printf 'median CPU per file: curl -Z %.0f µs, transferd %.0f µs (daemon and transferctl); median ratio transferd / curl %.2f\n' \
    "$(median < "$BENCH_DIR/c.txt")" "$(median < "$BENCH_DIR/t.txt")" "$(median < "$BENCH_DIR/r.txt")"
