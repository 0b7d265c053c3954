#!/usr/bin/env bash
# Throttling accuracy, transferd against `curl --limit-rate` in the same run:
#   1. a SIZE_MIB download at RATE, 2. a SIZE_MIB multipart upload at RATE (to bench/sink.py),
#   3. four concurrent downloads under one global limit of RATE (transferd only: curl has no
#      global limit), 4. limits changed while transfers run (transferd only), timed.
# Prints, as fractions of the limit, the average rate, the lowest and highest 1-second rate
# after the first second (windows end to end, and any second at all: sliding windows), and the
# burst: the most bytes moved above the average rate over any interval (see bench/rates.py).
# Downloads are sampled every 100 ms; uploads are timed exactly where they arrive (`, exact`).
#   usage: bench/throttle.sh [SIZE_MIB=100] [RATE_MIB=5]
source "$(dirname "$0")/lib.sh"
SIZE_MIB=${1:-100}
RATE_MIB=${2:-5}
SIZE=$((SIZE_MIB * 1024 * 1024))
RATE=$((RATE_MIB * 1024 * 1024))

build_release
head -c "$SIZE" /dev/urandom > "$BENCH_DIR/www/file.bin"
for n in 1 2 3 4; do head -c $((SIZE / 4)) /dev/urandom > "$BENCH_DIR/www/part$n.bin"; done
start_nginx
SINK_PORT=$((PORT + 1))
# The sink also writes each body to a file as it arrives: uploads are measured where the bytes
# land, the same way for both tools (not by what each client read from disk).
/usr/bin/python3 "$ROOT/bench/sink.py" "$SINK_PORT" "$BENCH_DIR/logs/sink.log" "$BENCH_DIR/received" &
start_transferd
machine
echo "limit: $RATE_MIB MiB/s; transfers of $SIZE_MIB MiB"
URL="http://127.0.0.1:$PORT"
RATES="$ROOT/bench/rates.py"
summary() {  # label json -> one line with fractions of the limit
    python3 -c 'import json,sys
r = json.loads(sys.argv[2]); limit = float(sys.argv[3])
def f(v): return "   -  " if v is None else "%6.3f" % (v / limit)
def kib(v): return "   -   " if v is None else "%7.1f" % (v / 1024)
def line(name, s, cpu=""): print("%-32s avg %s  1-s windows %s..%s  any 1 s %s..%s  burst %s KiB  %s(%.1f s%s)" % (
    name, f(s["average"]), f(s["low"]), f(s["high"]), f(s["anyLow"]), f(s["anyHigh"]), kib(s["burst"]), cpu,
    s["seconds"], ", exact" if s["exact"] else ""))
line(sys.argv[1], r["total"], "cpu %.2f s " % r["cpu"])
for i, s in enumerate(r.get("each", [])):
    line("  job %d (share %.2f of limit)" % (i + 1, 1 / len(r["each"])), s)' "$1" "$2" "$3"
}

out="$BENCH_DIR/out"
CTL="$BIN/transferctl --state-dir $BENCH_DIR/state"
id=$(ctl download "$URL/file.bin" -o "$out/t.bin" --limit-rate "${RATE_MIB}M" --paused)
summary "download transferd" "$(CPU_PID=$TRANSFERD_PID "$RATES" down "$SIZE" "$CTL resume $id" "file:$out/.t.bin.transferd-part|$out/t.bin")" "$RATE"
summary "download curl --limit-rate" "$("$RATES" down "$SIZE" "curl -s --limit-rate $RATE -o $out/c.bin $URL/file.bin" \
    "file:$out/c.bin")" "$RATE"

id=$(ctl upload "http://127.0.0.1:$SINK_PORT/up" -F "file=@$BENCH_DIR/www/file.bin" --limit-rate "${RATE_MIB}M" --paused)
summary "upload transferd" "$(CPU_PID=$TRANSFERD_PID "$RATES" up "$SIZE" "$CTL resume $id" "sink:$BENCH_DIR/received")" "$RATE"
ctl wait "$id" >/dev/null
summary "upload curl --limit-rate" "$("$RATES" up "$SIZE" \
    "curl -s --limit-rate $RATE -F file=@$BENCH_DIR/www/file.bin http://127.0.0.1:$SINK_PORT/up >/dev/null" \
    "sink:$BENCH_DIR/received")" "$RATE"

ctl limit --down "${RATE_MIB}M" >/dev/null
ids=(); sources=()
for n in 1 2 3 4; do
    ids+=("$(ctl download "$URL/part$n.bin" -o "$out/p$n.bin" --paused)")
    sources+=("file:$out/.p$n.bin.transferd-part|$out/p$n.bin")
done
summary "4 downloads, one global limit" "$(CPU_PID=$TRANSFERD_PID "$RATES" four $((SIZE / 4)) "$CTL resume ${ids[*]}" "${sources[@]}")" "$RATE"
ctl wait "${ids[@]}" >/dev/null

# 4. Limits changed while transfers run (curl cannot): seconds from the `limit` command to the
#    first 0.2 s at the new rate, for a job's own limit raised, the global limit lowered, and
#    an upload's limit raised. The start is RATE/2, the new rate RATE*2 (or back to RATE/2).
retarget() {  # label start-command source change-command new-rate
    python3 -c 'import json,sys
r = json.loads(sys.argv[2]); M = 1048576
print("%-32s %s MiB/s before, %s s to the new %.1f MiB/s (%s MiB/s in the second after)" % (sys.argv[1],
    "%.2f" % (r["before"] / M), "never" if r["seconds"] is None else "%.2f" % r["seconds"], float(sys.argv[3]) / M,
    "-" if r["after"] is None else "%.2f" % (r["after"] / M)))' "$1" "$("$ROOT/bench/retarget.py" "$2" "$3" "$4" "$5")" "$5"
}
ctl limit --down off >/dev/null
SLOW=$((RATE / 2)); FAST=$((RATE * 2))
id=$(ctl download "$URL/file.bin" -o "$out/r1.bin" --limit-rate "$SLOW" --paused)
retarget "job limit raised (download)" "$CTL resume $id" "$out/.r1.bin.transferd-part" "$CTL limit $id $FAST" "$FAST"
ctl cancel "$id" >/dev/null 2>&1 || true  # it may have finished
ctl limit --down "$FAST" >/dev/null
id=$(ctl download "$URL/file.bin" -o "$out/r2.bin" --paused)
retarget "global limit lowered (download)" "$CTL resume $id" "$out/.r2.bin.transferd-part" "$CTL limit --down $SLOW" "$SLOW"
ctl cancel "$id" >/dev/null 2>&1 || true  # it may have finished
id=$(ctl upload "http://127.0.0.1:$SINK_PORT/up" -T "$BENCH_DIR/www/file.bin" --limit-rate "$SLOW" --paused)
retarget "job limit raised (upload)" "$CTL resume $id" "$BENCH_DIR/received" "$CTL limit $id $FAST" "$FAST"
ctl cancel "$id" >/dev/null 2>&1 || true  # it may have finished
