#!/usr/bin/env bash
# Uploads the same file to a local S3 (moto, with SigV4 signature checking on and an IAM key,
# Tests/IntegrationTests/Harness/s3_server.py without its relay) with boto3's upload_file and
# its default TransferConfig (8 MiB parts, 10 threads) and with transferd (`transferctl upload
# s3://BUCKET/KEY -T FILE --s3-endpoint URL`, then `transferctl wait`), alternating, RUNS times;
# checks each object's sha256 through boto3 and deletes it; prints both throughputs, the median
# ratio transferd/boto3, transferd's peak RSS for the upload (VmHWM, reset before each run) and
# boto3's (its process's ru_maxrss). moto is one Python process: it bounds both rates.
#   usage: bench/upload-s3.sh [SIZE_MIB=1024] [RUNS=5]
#   BOTO3_ONLY=1 runs the boto3 half alone (for a transferd without S3 uploads).
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/deps.sh"
install_packages python3-venv
install_python_test_packages  # moto[server], boto3 into the test venv
SIZE_MIB=${1:-1024}
RUNS=${2:-5}
PY=$TEST_VENV/bin/python3
HARNESS=$ROOT/Tests/IntegrationTests/Harness

[ -n "${BOTO3_ONLY:-}" ] || build_release
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom > "$BENCH_DIR/www/file.bin"
want=$(sha256sum "$BENCH_DIR/www/file.bin" | cut -d' ' -f1)

# moto spills bodies over 5 MiB to temporary files: keep them in the bench directory.
mkdir -p "$BENCH_DIR/moto/tmp"
TMPDIR=$BENCH_DIR/moto/tmp "$PY" -u "$HARNESS/s3_server.py" --port "$PORT" --dir "$BENCH_DIR/moto" --no-relay \
    --bucket bench >> "$BENCH_DIR/logs/moto.log" 2>&1 &
for _ in $(seq 300); do [ -f "$BENCH_DIR/moto/ready.json" ] && break; sleep 0.1; done
[ -f "$BENCH_DIR/moto/ready.json" ] || { echo "moto did not start:" >&2; tail -20 "$BENCH_DIR/logs/moto.log" >&2; exit 1; }
ready() { "$PY" -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$BENCH_DIR/moto/ready.json" "$1"; }
ENDPOINT=$(ready endpoint)
# The IAM key moto checks every signature against; transferd (started below) inherits it.
export AWS_ACCESS_KEY_ID; AWS_ACCESS_KEY_ID=$(ready accessKey)
export AWS_SECRET_ACCESS_KEY; AWS_SECRET_ACCESS_KEY=$(ready secretKey)
export AWS_REGION=us-east-1 S3_ENDPOINT=$ENDPOINT S3_BUCKET=bench
unset AWS_SESSION_TOKEN AWS_PROFILE

[ -n "${BOTO3_ONLY:-}" ] || start_transferd

verify() {  # verify KEY: boto3 reads the object back; same sha256 as the file; then delete it
    local got; got=$("$PY" "$HARNESS/s3_client.py" sha256 "$1" | "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("sha256"))')
    [ "$got" = "$want" ] || { echo "s3://bench/$1: sha256 $got, want $want" >&2; exit 1; }
    "$PY" "$HARNESS/s3_client.py" delete "$1" >/dev/null
}

machine
echo "moto $("$PY" -c 'import moto; print(moto.__version__)'), boto3 $("$PY" -c 'import boto3; print(boto3.__version__)')," \
     "signature checking on; file: $SIZE_MIB MiB, $RUNS runs each, alternating"
runs_header boto3 MiB/s "transferd_peak_RSS_MiB boto3_peak_RSS_MiB"
: > "$BENCH_DIR/rss.txt"; : > "$BENCH_DIR/boto3-rss.txt"
for run in $(seq "$RUNS"); do
    sync
    out=$("$PY" "$ROOT/bench/s3_upload.py" "$BENCH_DIR/www/file.bin" bench "boto3-$run.bin")
    verify "boto3-$run.bin"
    boto3_seconds=$(echo "$out" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["seconds"])')
    boto3_rss=$(echo "$out" | "$PY" -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["maxRSSKiB"] / 1024))')
    boto3_rate=$(echo "$SIZE_MIB / $boto3_seconds" | bc -l)
    echo "$boto3_rss" >> "$BENCH_DIR/boto3-rss.txt"
    if [ -n "${BOTO3_ONLY:-}" ]; then
        echo "$boto3_rate" >> "$BENCH_DIR/peer.txt"
        printf '%-4s %16.0f %18s %8s %s\n' "$run" "$boto3_rate" - - "- $boto3_rss"
        continue
    fi

    sync
    echo 5 > "/proc/$TRANSFERD_PID/clear_refs"  # reset VmHWM
    start=$(now)
    id=$(ctl upload "s3://bench/transferd-$run.bin" -T "$BENCH_DIR/www/file.bin" --s3-endpoint "$ENDPOINT") \
        || { echo "transferctl upload s3://… failed (a transferd without S3 uploads? BOTO3_ONLY=1 runs boto3 alone)" >&2; exit 1; }
    ctl wait "$id" >/dev/null || { ctl show "$id" >&2; exit 1; }
    end=$(now)
    rss=$(awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$TRANSFERD_PID/status")
    verify "transferd-$run.bin"
    td_rate=$(echo "$SIZE_MIB / ($end - $start)" | bc -l)
    echo "$rss" >> "$BENCH_DIR/rss.txt"
    run_row "$run" "$boto3_rate" "$td_rate" "$rss $boto3_rss"
done
if [ -n "${BOTO3_ONLY:-}" ]; then
    printf 'median: boto3 %.0f MiB/s; boto3 peak RSS %s MiB (max of runs)\n' \
        "$(median < "$BENCH_DIR/peer.txt")" "$(sort -g "$BENCH_DIR/boto3-rss.txt" | tail -1)"
    exit 0
fi
runs_medians boto3 MiB/s
printf '; transferd peak RSS %s MiB, boto3 peak RSS %s MiB (max of runs)\n' \
    "$(sort -g "$BENCH_DIR/rss.txt" | tail -1)" "$(sort -g "$BENCH_DIR/boto3-rss.txt" | tail -1)"
