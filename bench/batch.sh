#!/usr/bin/env bash
# Batches at scale, against a local nginx:
#  1. a manifest of JOBS downloads submitted with `batch submit` (time until every line is
#     queued: the command returns once they are durable in SQLite), then `list --batch` (first
#     page of 100 and the next one with --before): each answer's time;
#  2. FILES small files of SIZE_KIB downloaded by `aria2c -i LIST -j 16` and by transferd
#     (`batch submit`, --max-active 16 --max-per-host 16, until `wait --batch` returns), in
#     the same run, alternating, RUNS times: files per second for both, and their ratio.
# Every transferd job is persisted; aria2c keeps nothing. Each measurement starts after `sync`.
#   usage: bench/batch.sh [JOBS=10000] [FILES=2000] [SIZE_KIB=64] [RUNS=5]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages aria2  # the peer this benchmark races
JOBS=${1:-10000}
FILES=${2:-2000}
SIZE_KIB=${3:-64}
RUNS=${4:-5}

build_release
mkdir -p "$BENCH_DIR/slow"
fresh_inodes
small_files "$FILES" "$SIZE_KIB"
head -c 65536 /dev/urandom > "$BENCH_DIR/www/slow.bin"
start_nginx 'location /slow/ { alias '"$BENCH_DIR"'/www/; limit_rate 1k; }'
start_transferd --max-active 16 --max-per-host 16
machine
echo "aria2c: $(aria2c --version | head -1)"

# 1. Submitting a manifest, and paging through its batch.
for i in $(seq "$JOBS"); do
    printf '{"key":"k%d","download":{"url":"http://127.0.0.1:%d/slow/slow.bin","output":"%s/slow/o%d"}}\n' \
        "$i" "$PORT" "$BENCH_DIR" "$i"
done > "$BENCH_DIR/manifest.jsonl"
sync
start=$(now); batch=$(ctl batch submit "$BENCH_DIR/manifest.jsonl" 2>/dev/null); end=$(now)
printf 'submit %d lines: %.3f s (batch %s)\n' "$JOBS" "$(echo "$end - $start" | bc -l)" "$batch"
start=$(now); ctl list --batch "$batch" --limit 100 --json > "$BENCH_DIR/page1.json"; end=$(now)
printf 'list --batch %s --limit 100: %.0f ms\n' "$batch" "$(echo "($end - $start) * 1000" | bc -l)"
last=$(grep -o '"id" *: *[0-9]*' "$BENCH_DIR/page1.json" | tail -1 | grep -o '[0-9]*$')
start=$(now); ctl list --batch "$batch" --limit 100 --before "$last" --json > "$BENCH_DIR/page2.json"; end=$(now)
printf 'list --batch %s --limit 100 --before %s: %.0f ms\n' "$batch" "$last" "$(echo "($end - $start) * 1000" | bc -l)"
start=$(now); ctl batch show "$batch" >/dev/null; end=$(now)
printf 'batch show %s: %.0f ms\n' "$batch" "$(echo "($end - $start) * 1000" | bc -l)"
queued=$(ctl batch show "$batch" --json | grep -o '"jobCount" *: *[0-9]*' | grep -o '[0-9]*$')
[ "$queued" -eq "$JOBS" ] || { echo "batch holds $queued jobs, expected $JOBS" >&2; exit 1; }
ctl cancel --batch "$batch" >/dev/null

# 2. Many small files: aria2c -j 16 against transferd.
for i in $(seq "$FILES"); do echo "http://127.0.0.1:$PORT/small/f$i"; done > "$BENCH_DIR/list.txt"
echo "files: $FILES x $SIZE_KIB KiB, $RUNS runs each, alternating"
runs_header aria2c files/s
for run in $(seq "$RUNS"); do
    rm -rf "$BENCH_DIR/out/aria" "$BENCH_DIR/out/td"; mkdir -p "$BENCH_DIR/out/aria" "$BENCH_DIR/out/td"; sync
    start=$(now)
    aria2c -q -i "$BENCH_DIR/list.txt" -j 16 -d "$BENCH_DIR/out/aria" --file-allocation=none
    end=$(now)
    aria_rate=$(echo "$FILES / ($end - $start)" | bc -l)
    count=$(find "$BENCH_DIR/out/aria" -type f -size "${SIZE_KIB}k" | wc -l)
    [ "$count" -eq "$FILES" ] || { echo "aria2c wrote $count files" >&2; exit 1; }

    for i in $(seq "$FILES"); do
        printf '{"download":{"url":"http://127.0.0.1:%d/small/f%d","output":"%s/out/td/f%d"}}\n' "$PORT" "$i" "$BENCH_DIR" "$i"
    done > "$BENCH_DIR/small.jsonl"
    sync
    start=$(now)
    batch=$(ctl batch submit "$BENCH_DIR/small.jsonl" 2>/dev/null)
    ctl wait --batch "$batch" >/dev/null || { ctl batch show "$batch" >&2; exit 1; }
    end=$(now)
    td_rate=$(echo "$FILES / ($end - $start)" | bc -l)
    count=$(find "$BENCH_DIR/out/td" -type f -size "${SIZE_KIB}k" | wc -l)
    [ "$count" -eq "$FILES" ] || { echo "transferd wrote $count files" >&2; exit 1; }
    run_row "$run" "$aria_rate" "$td_rate"
done
runs_medians aria2c files/s; echo
