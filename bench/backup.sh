#!/usr/bin/env bash
# A directory backup of many small files to nginx's WebDAV (PUT, MKCOL), at equal parallelism
# (16 at once): `rclone copy --transfers 16` and transferd (`backup DIR --to URL`,
# --max-active 16 --max-per-host 16, until `wait --batch` returns), alternating, RUNS times,
# each into a collection of its own. Prints files per second for both and the median ratio.
# Every transferd job is recorded (and each file checked against its snapshot) before `wait`
# returns; rclone keeps nothing. rclone needs PROPFIND, which nginx answers with the dav-ext
# module; it is told not to list or check the destination (`--no-check-dest --no-traverse`),
# which only spares it work.
#   usage: bench/backup.sh [FILES=2000] [SIZE_KIB=64] [RUNS=5]
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages rclone libnginx-mod-http-dav-ext  # the peer this benchmark races, and its PROPFIND
FILES=${1:-2000}
SIZE_KIB=${2:-64}
RUNS=${3:-5}

build_release
fresh_inodes
mkdir -p "$BENCH_DIR/src/a/b" "$BENCH_DIR/www/dav"
for i in $(seq "$FILES"); do
    dir="$BENCH_DIR/src"; [ $((i % 4)) -eq 1 ] && dir="$BENCH_DIR/src/a"; [ $((i % 4)) -eq 2 ] && dir="$BENCH_DIR/src/a/b"
    head -c $((SIZE_KIB * 1024)) /dev/urandom > "$dir/f$i"
done
chmod 777 "$BENCH_DIR/www/dav"  # nginx's workers write as nobody
start_nginx 'location /dav/ { dav_methods PUT MKCOL; dav_ext_methods PROPFIND OPTIONS; client_max_body_size 0; }' '' \
    'load_module /usr/lib/nginx/modules/ngx_http_dav_ext_module.so;'
start_transferd --max-active 16 --max-per-host 16
machine
echo "rclone: $(rclone version | head -1); files: $FILES x $SIZE_KIB KiB in 3 directories, $RUNS runs, alternating"

# Files per second of the command in "$@", which uploads into the collection dav/$1; checks
# that every file arrived whole.
rate() {
    local name=$1; shift
    sync
    local start end; start=$(now); "$@" || { echo "$* failed" >&2; exit 1; }; end=$(now)
    local count; count=$(find "$BENCH_DIR/www/dav/$name" -type f -size "${SIZE_KIB}k" | wc -l)
    [ "$count" -eq "$FILES" ] || { echo "$name: $count files arrived" >&2; exit 1; }
    echo "$FILES / ($end - $start)" | bc -l
}
transferd_backup() {
    local batch; batch=$(ctl backup "$BENCH_DIR/src" --to "http://127.0.0.1:$PORT/dav/$1/" 2>/dev/null)
    ctl wait --batch "$batch" >/dev/null || { ctl batch show "$batch" >&2; return 1; }
}
rclone_copy() {
    rclone copy -q --transfers 16 --no-check-dest --no-traverse --webdav-url "http://127.0.0.1:$PORT/dav/" \
        "$BENCH_DIR/src" ":webdav:$1"
}

runs_header rclone files/s
for run in $(seq "$RUNS"); do
    r=$(rate "rclone$run" rclone_copy "rclone$run")
    t=$(rate "td$run" transferd_backup "td$run")
    run_row "$run" "$r" "$t"
done
runs_medians rclone files/s; echo
