#!/usr/bin/env bash
# What making many small files durable costs on this machine, without transferd: FILES files of
# SIZE_KIB written by 16 threads into one new directory on the file system of BENCH_DIR, (0)
# nothing synced, (1) each fdatasynced and renamed from a .part name, (2) all written, one
# syncfs, renamed; the directory fsynced. Prints wall and CPU time of each, RUNS times. Each
# starts after `settle` (lib.sh), as every tool does in the other benchmarks: on this VM, with
# the page cache full, plain writes took 0.29-0.52 s instead of 0.04-0.09 s and varied more
# than the modes differ.
#   usage: bench/durable-floor.sh [RUNS=2]
source "$(dirname "$0")/lib.sh"
RUNS=${1:-2}
cc -O2 -o "$BENCH_DIR/floor" "$ROOT/bench/durable-floor.c" -lpthread
for run in $(seq "$RUNS"); do
    for mode in 0 1 2; do
        settle
        /usr/bin/time -f "  %e s wall, %U s user, %S s system" "$BENCH_DIR/floor" "$mode" "$BENCH_DIR/out/$mode.$run" 16 2>&1
    done
done
