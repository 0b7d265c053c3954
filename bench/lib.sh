# Shared helpers for the benchmark scripts: a private nginx on 127.0.0.1 and a private transferd.
# Source this file; it defines BENCH_DIR, start_nginx, start_transferd, median, and cleans up on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-$(mktemp -d /var/tmp/transferd-bench.XXXXXX)}
BIN=${BIN:-$ROOT/.build/release}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
mkdir -p "$BENCH_DIR"/{www,logs,state,out,nginx}
chmod 755 "$BENCH_DIR" "$BENCH_DIR/www"  # nginx workers run as nobody

cleanup() {
    [ -f "$BENCH_DIR/nginx.pid" ] && kill "$(cat "$BENCH_DIR/nginx.pid")" 2>/dev/null || true
    [ -n "${TRANSFERD_PID:-}" ] && kill "$TRANSFERD_PID" 2>/dev/null || true
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
    if [ -z "${KEEP_BENCH_DIR:-}" ]; then
        rm -rf "$BENCH_DIR"
        touch "$DELETED_STAMP"
    fi
}
trap cleanup EXIT

# This VM's file system is ext4 without a journal. There, for some minutes after a file is
# deleted, ext4 does not give its inode to a new file (fs/ext4/ialloc.c, recently_deleted(): 60 s,
# 360 s while the inode's table block is dirty): every file created in a block group that holds
# such inodes pays a scan over them. Right after a benchmark's cleanup deleted its ~20,000
# files, curl -Z wrote 2,000 × 64 KiB at 3,900-5,500 files/s with 0.30-0.44 s of system time;
# 400 s later, into the same groups, at 6,400-9,100 (five runs of six at 8,000 or more) with
# 0.15-0.21 s (BENCHMARKS.md). The penalty falls on whichever tool's directory lands there,
# so a benchmark that creates many files calls `fresh_inodes` first: it waits until the last
# cleanup (its stamp) is that old.
DELETED_STAMP=/var/tmp/transferd-bench.deleted
fresh_inodes() {
    [ -f "$DELETED_STAMP" ] || return 0
    local age wait
    age=$(( $(date +%s) - $(stat -c %Y "$DELETED_STAMP") ))
    wait=$(( ${FRESH_INODES_S:-370} - age ))
    [ "$wait" -gt 0 ] || return 0
    echo "waiting $wait s: a benchmark deleted its files $age s ago, and ext4 scans past their inodes until" \
         "they are ${FRESH_INODES_S:-370} s old (lib.sh fresh_inodes; FRESH_INODES_S=0 skips)" >&2
    sleep "$wait"
}

build_release() {
    "$ROOT/scripts/build.sh" >/dev/null
}

# start_nginx [SERVER_CONFIG] [HTTP_CONFIG] [MAIN_CONFIG]: lines for the server block, the http
# block and the top level (load_module).
start_nginx() {
    local extra=${1:-} http_extra=${2:-} main_extra=${3:-}
    cat > "$BENCH_DIR/nginx.conf" <<CONF
$main_extra
daemon on;
worker_processes 1;
pid $BENCH_DIR/nginx.pid;
error_log $BENCH_DIR/logs/error.log;
events { worker_connections 256; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $BENCH_DIR/nginx/body;
  proxy_temp_path $BENCH_DIR/nginx/proxy;
  fastcgi_temp_path $BENCH_DIR/nginx/fastcgi;
  uwsgi_temp_path $BENCH_DIR/nginx/uwsgi;
  scgi_temp_path $BENCH_DIR/nginx/scgi;
  $http_extra
  server {
    listen 127.0.0.1:$PORT;
    root $BENCH_DIR/www;
    $extra
  }
}
CONF
    nginx -c "$BENCH_DIR/nginx.conf" -p "$BENCH_DIR"
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return; sleep 0.05; done
    echo "nginx did not start" >&2; exit 1
}

# small_files FILES [SIZE_KIB=64]: FILES files of random bytes, served as /small/f1 ... /small/fFILES.
small_files() {
    mkdir -p "$BENCH_DIR/www/small"
    for i in $(seq "$1"); do head -c $((${2:-64} * 1024)) /dev/urandom > "$BENCH_DIR/www/small/f$i"; done
}

# curl_config FILES: $BENCH_DIR/curl.cfg, for `curl -K`: /small/f1 ... /small/fFILES, each into
# a file of its name.
curl_config() {
    for i in $(seq "$1"); do printf 'url = "http://127.0.0.1:%d/small/f%d"\noutput = "f%d"\n' "$PORT" "$i" "$i"; done > "$BENCH_DIR/curl.cfg"
}

ctl() { "$BIN/transferctl" --state-dir "$BENCH_DIR/state" "$@"; }

# start_transferd [OPTION...]: the daemon on $BENCH_DIR/state, run under $TRANSFERD_UNDER (a
# command and its options, e.g. valgrind's) when that is set; waits up to a minute for it.
start_transferd() {
    ${TRANSFERD_UNDER:-} "$BIN/transferd" --state-dir "$BENCH_DIR/state" "$@" 2>>"$BENCH_DIR/logs/transferd.log" &
    TRANSFERD_PID=$!
    for _ in $(seq 1200); do ctl stats >/dev/null 2>&1 && return; sleep 0.05; done
    echo "transferd did not start" >&2; exit 1
}

# Before each measurement: every dirty page written and, where allowed (root; NO_DROP_CACHES
# unset), the page cache dropped and the served files and the daemons' state (the database a
# running daemon has in memory) read back in, then the programs of the next run started once.
# On this VM a large page cache makes each new page-cache page slow to get: 2,000 files of
# 64 KiB written by a plain loop take 80-110 ms after a drop and 330-400 ms with ~10 GB cached,
# so without this every run pays for the runs before it. With it, every tool starts from the
# same memory.  usage: settle [COMMAND...] (run once after the drop, to load it)
settle() {
    sync
    [ -w /proc/sys/vm/drop_caches ] && [ -z "${NO_DROP_CACHES:-}" ] || return 0
    echo 3 > /proc/sys/vm/drop_caches
    find "$BENCH_DIR/www" "$BENCH_DIR"/state* -type f -exec cat {} + > /dev/null
    [ $# -eq 0 ] || "$@" > /dev/null 2>&1 || true
}

# Seconds since the epoch with nanoseconds.
now() { date +%s.%N; }

# The machine's steal time so far, in ms, summed over its cores: the time the hypervisor ran
# someone else while this VM had work. On this VM it is 0 in a quiet minute and reached 940 ms
# of curl's 1,178 in a busy one; a run that lost more than a little of it to steal measured the
# neighbours, not the tool (`quiet`).
steal_ms() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print int($9 * 1000 / hz) }' /proc/stat; }

# quiet STEAL_MS SECONDS: true when a run of SECONDS lost under 5 % of its core time to steal.
quiet() { [ "$(echo "$1 < 0.05 * $2 * 1000 * $(nproc)" | bc -l)" -eq 1 ]; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

machine() {
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)," \
         "$(curl --version | head -1 | cut -d' ' -f1-2), $(nginx -v 2>&1 | cut -d' ' -f3)"
}

# Runs that pit a peer against transferd, one line each: `runs_header PEER UNIT [EXTRA]` prints
# the column heads, `run_row RUN PEER_RATE TRANSFERD_RATE [EXTRA]` one run (and keeps its
# figures), `runs_medians PEER UNIT` the medians of both rates and of their ratio (no newline).
runs_header() {
    printf '%-4s %16s %18s %8s %s\n' run "$1_$2" "transferd_$2" ratio "${3:-}"
    : > "$BENCH_DIR/peer.txt"; : > "$BENCH_DIR/transferd.txt"; : > "$BENCH_DIR/ratio.txt"
}

run_row() {
    local ratio; ratio=$(echo "$3 / $2" | bc -l)
    echo "$2" >> "$BENCH_DIR/peer.txt"; echo "$3" >> "$BENCH_DIR/transferd.txt"; echo "$ratio" >> "$BENCH_DIR/ratio.txt"
    printf '%-4s %16.0f %18.0f %8.2f %s\n' "$1" "$2" "$3" "$ratio" "${4:-}"
}

runs_medians() {
    printf 'median: %s %.0f %s, transferd %.0f %s, ratio %.2f' "$1" "$(median < "$BENCH_DIR/peer.txt")" "$2" \
        "$(median < "$BENCH_DIR/transferd.txt")" "$2" "$(median < "$BENCH_DIR/ratio.txt")"
}
