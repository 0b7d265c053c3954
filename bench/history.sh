#!/usr/bin/env bash
# History at scale: a state directory holding JOBS ended jobs (default 1,000,000, as a daemon
# leaves them: one attempt each with libcurl's timings, one in ten with a first attempt cut
# off, 40% backup uploads in batches of 2,500 with their server answers and backup records,
# 0.1% failed with resume data, 1.5% cancelled, 1% with a hook run; ends spread over 60 days),
# written with sqlite3 into a stopped daemon's database. Then, against the release transferd:
#  1. its start (until `stats` answers);
#  2. `list` pages, RUNS times each (median, min–max of the whole transferctl command): the
#     newest 100, a page deep in the list (--before), `--state failed` (1,000 among a million)
#     newest and deep, `--state cancelled`, `--batch`;
#  3. `prune` of every job, PRUNE_RUNS times on a fresh copy of the database; once more with
#     `list --limit 1` asked in a loop meanwhile (its longest answer: how long a chunk holds the
#     store); then `prune --older-than 30d` (about half) and again (nothing left to do).
# Each measurement starts after `sync`. The query plans of the daemon's list and prune
# statements are printed first (EXPLAIN QUERY PLAN on the same database).
#   usage: bench/history.sh [JOBS=1000000] [RUNS=7] [PRUNE_RUNS=3]
source "$(dirname "$0")/lib.sh"
JOBS=${1:-1000000}
RUNS=${2:-7}
PRUNE_RUNS=${3:-3}
DB="$BENCH_DIR/state/transfers.db"

build_release
machine
echo "sqlite3: $(sqlite3 --version | cut -d' ' -f1)"

ms() { echo "($2 - $1) * 1000" | bc -l; }

# Starts transferd and waits (up to 60 s) until it answers; STARTED_IN: the seconds it took.
start_daemon() {
    local start; start=$(now)
    "$BIN/transferd" --state-dir "$BENCH_DIR/state" "$@" >/dev/null 2>>"$BENCH_DIR/logs/transferd.log" &
    TRANSFERD_PID=$!
    for _ in $(seq 1200); do
        ctl stats >/dev/null 2>&1 && { STARTED_IN=$(echo "$(now) - $start" | bc -l); return; }
        sleep 0.05
    done
    echo "transferd did not start" >&2; exit 1
}

stop_daemon() {
    kill "$TRANSFERD_PID"; wait "$TRANSFERD_PID" || true; TRANSFERD_PID=
}

# The schema: what a daemon makes at its first start.
start_daemon
stop_daemon

fill() {
sqlite3 "$DB" <<SQL
PRAGMA foreign_keys = OFF;
BEGIN;
CREATE TEMP TABLE params AS SELECT $JOBS AS n, CAST(strftime('%s','now') AS INTEGER) * 1000 - 60 * 86400000 AS base;
CREATE TEMP TABLE seq (i INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c, params WHERE i < n) INSERT INTO seq SELECT i FROM c;
INSERT INTO batches (id, name, created_at, backup_dir, backup_prefix)
SELECT b, 'backup /srv/data', base + (b - 1) * 2500 * (60 * 86400000 / n), '/srv/data', 'https://dav.example.com/backup'
FROM (SELECT DISTINCT (i - 1) / 2500 + 1 AS b FROM seq), params;
INSERT INTO jobs (id, kind, state, state_reason, url, path, headers, priority, batch_id, max_retries, bytes_done, bytes_total,
                  attempts, http_status, error_code, error_message, created_at, updated_at, finished_at, method, upload,
                  on_complete, umask, retry_unsafe, started_at)
SELECT i,
       CASE WHEN up THEN 'upload' ELSE 'download' END,
       st,
       CASE st WHEN 'failed' THEN 'the server answered HTTP 404' WHEN 'cancelled' THEN 'cancelled by user' END,
       CASE WHEN up THEN 'https://dav.example.com/backup/d' || ((i - 1) / 2500) || '/f' || i || '.jpg'
            ELSE 'https://mirror.example.com/pub/releases/file-' || i || '.tar.gz' END,
       CASE WHEN up THEN '/srv/data/d' || ((i - 1) / 2500) || '/f' || i || '.jpg' ELSE '/srv/downloads/file-' || i || '.tar.gz' END,
       '[]', 'normal', CASE WHEN up THEN (i - 1) / 2500 + 1 END, 7,
       CASE st WHEN 'completed' THEN size ELSE size / 3 END, size,
       CASE WHEN i % 10 = 3 THEN 2 ELSE 1 END,
       CASE st WHEN 'failed' THEN 404 WHEN 'completed' THEN CASE WHEN up THEN 201 ELSE 200 END END,
       CASE st WHEN 'failed' THEN 'http_status' END, CASE st WHEN 'failed' THEN 'the server answered HTTP 404' END,
       t, t + 1500, t + 1500, CASE WHEN up THEN 'PUT' END,
       CASE WHEN up THEN '{"raw":{"modified":"2026-09-01T10:00:00.123456789Z","path":"\/srv\/data\/d' || ((i - 1) / 2500)
                         || '\/f' || i || '.jpg","size":' || size || '}}' END,
       CASE WHEN i % 100 = 7 THEN 'notify-send done' END, 18, 0, t + 2
FROM (SELECT i, (i % 5) < 2 AS up,
             CASE WHEN i % 1000 = 0 THEN 'failed' WHEN i % 67 = 0 THEN 'cancelled' ELSE 'completed' END AS st,
             1000 + (i * 7919) % 50000000 AS size,
             base + i * (60 * 86400000 / n) AS t
      FROM seq, params);
INSERT INTO attempts (job_id, number, started_at, ended_at, range_start, http_status, error_code, error_message, bytes, metrics, not_retried)
SELECT id, attempts, started_at + 400, finished_at, 0, http_status, error_code, error_message, bytes_done,
       '{"remoteAddress":"203.0.113.7:443","httpVersion":"2","bytesPerSecond":' || (bytes_done * 1000 / 1100)
       || ',"firstByteMs":31.2,"connectMs":10.3,"nameLookupMs":0.9,"totalMs":1100.4,"tlsMs":20.7}',
       CASE state WHEN 'failed' THEN 'permanent' END
FROM jobs;
INSERT INTO attempts (job_id, number, started_at, ended_at, range_start, error_code, error_message, bytes, metrics)
SELECT id, 1, started_at, started_at + 300, 0, 'network', 'Connection reset by peer', 4096,
       '{"remoteAddress":"203.0.113.7:443","httpVersion":"2","bytesPerSecond":13653,"firstByteMs":31.2,"connectMs":10.3,"nameLookupMs":0.9,"totalMs":300.0,"tlsMs":20.7}'
FROM jobs WHERE attempts = 2;
INSERT INTO resume_data (job_id, partial_path, bytes_durable, etag, last_modified, bytes_total, file_device, file_inode,
                         file_size, file_mtime_ns)
SELECT id, '/srv/downloads/.file-' || id || '.tar.gz.transferd-part', bytes_done, '"5f3a-' || id || '"',
       'Tue, 01 Sep 2026 10:00:00 GMT', bytes_total, 65024, 1000000 + id, bytes_done, finished_at * 1000000
FROM jobs WHERE state = 'failed' AND kind = 'download';
INSERT INTO upload_responses (job_id, status, headers, body, truncated)
SELECT id, 201, '["Server: nginx","Date: Tue, 01 Sep 2026 10:00:00 GMT","Content-Length: 0","Connection: keep-alive"]', x'', 0
FROM jobs WHERE kind = 'upload' AND state = 'completed';
INSERT INTO backup_files (directory, prefix, relative_path, size, mtime_ns, job_id, done)
SELECT '/srv/data', 'https://dav.example.com/backup', 'd' || (batch_id - 1) || '/f' || id || '.jpg', bytes_total,
       1788256800123456789, id, state = 'completed'
FROM jobs WHERE kind = 'upload';
INSERT INTO hook_runs (job_id, event, command, started_at, result)
SELECT id, 'complete', on_complete, finished_at + 1,
       '{"timedOut":false,"startError":null,"exitStatus":0,"signal":null,"output":"","durationMilliseconds":6,"truncated":false}'
FROM jobs WHERE on_complete IS NOT NULL AND state = 'completed';
DELETE FROM sqlite_sequence WHERE name IN ('jobs', 'batches');
INSERT INTO sqlite_sequence (name, seq) VALUES ('jobs', (SELECT max(id) FROM jobs)), ('batches', (SELECT max(id) FROM batches));
COMMIT;
SQL
}

start=$(now); fill; end=$(now)
printf 'filled %d jobs in %.1f s: %s\n' "$JOBS" "$(echo "$end - $start" | bc -l)" \
    "$(sqlite3 "$DB" "SELECT group_concat(t || ' ' || c, ', ') FROM (SELECT 'jobs' t, count(*) c FROM jobs UNION ALL
        SELECT 'attempts', count(*) FROM attempts UNION ALL SELECT 'batches', count(*) FROM batches UNION ALL
        SELECT 'backup_files', count(*) FROM backup_files UNION ALL SELECT 'hook_runs', count(*) FROM hook_runs)")"
echo "jobs by state: $(sqlite3 "$DB" "SELECT group_concat(state || ' ' || c, ', ') FROM (SELECT state, count(*) c FROM jobs GROUP BY state)")"
printf 'database: %d MiB\n' $(( $(stat -c %s "$DB") / 1048576 ))
cp "$DB" "$BENCH_DIR/filled.db"

# The daemon's own statements (JobStore.jobsQuery, JobStore.candidatesQuery), planned by SQLite.
COLUMNS="id, state, batch_id"
PRUNABLE="state IN ('completed', 'failed', 'cancelled')
        AND id NOT IN (SELECT job_id FROM pending_hooks WHERE job_id IS NOT NULL)
        AND (batch_id IS NULL OR batch_id NOT IN (
            SELECT batch_id FROM jobs WHERE state IN ('queued', 'running', 'paused', 'waiting') AND batch_id IS NOT NULL
            UNION ALL SELECT batch_id FROM pending_hooks WHERE job_id IS NULL AND batch_id IS NOT NULL))"
plan() { printf '%s:\n' "$1"; sqlite3 "$DB" "EXPLAIN QUERY PLAN $2" | sed 's/^/    /'; }
plan "list" "SELECT $COLUMNS FROM jobs WHERE id < ?1 ORDER BY id DESC LIMIT ?2"
plan "list --state" "SELECT $COLUMNS FROM jobs WHERE id < ?1 AND state = ?3 ORDER BY id DESC LIMIT ?2"
plan "list --batch" "SELECT $COLUMNS FROM jobs WHERE id < ?1 AND batch_id = ?3 ORDER BY id DESC LIMIT ?2"
plan "prune (one chunk)" "SELECT id, batch_id, finished_at FROM jobs
    WHERE state = ?1 AND finished_at IS NOT NULL AND finished_at < ?2 AND (finished_at, id) > (?3, ?4) AND $PRUNABLE
    ORDER BY finished_at, id LIMIT ?5"

sync
start_daemon
printf 'transferd start with %d jobs: %.2f s\n' "$JOBS" "$STARTED_IN"

# runs LABEL COMMAND...: RUNS timings of the whole command, in ms: median (min–max).
runs() {
    local label=$1; shift
    : > "$BENCH_DIR/times.txt"
    "$@" >/dev/null 2>&1  # warm
    for _ in $(seq "$RUNS"); do
        sync
        local start end; start=$(now); "$@" > "$BENCH_DIR/out.txt" 2>/dev/null; end=$(now)
        ms "$start" "$end" >> "$BENCH_DIR/times.txt"
    done
    printf '%-44s %7.1f ms  (%.1f–%.1f, %d runs, %d lines)\n' "$label" "$(median < "$BENCH_DIR/times.txt")" \
        "$(sort -g "$BENCH_DIR/times.txt" | head -1)" "$(sort -g "$BENCH_DIR/times.txt" | tail -1)" "$RUNS" \
        "$(wc -l < "$BENCH_DIR/out.txt")"
}

deep=$((JOBS / 2))
failed_deep=$(ctl list --state failed --limit 1 --before "$((JOBS / 10))" -q)
runs "transferctl --version (no request)" ctl --version
runs "stats (counts jobs by state)" ctl stats
runs "list --limit 100" ctl list --limit 100
runs "list --limit 100 --json" ctl --json list --limit 100
runs "list --limit 100 --before $deep" ctl list --limit 100 --before "$deep"
runs "list --limit 100 --before 1000" ctl list --limit 100 --before 1000
runs "list --state failed --limit 100" ctl list --state failed --limit 100
runs "list --state failed --limit 100 --before $failed_deep" ctl list --state failed --limit 100 --before "$failed_deep"
runs "list --state cancelled --limit 100" ctl list --state cancelled --limit 100
runs "list --batch $((JOBS / 5000)) --limit 100" ctl list --batch "$((JOBS / 5000))" --limit 100
runs "list (default page of 1000)" ctl list

# While a prune runs: `list --limit 1` in a loop, its longest answer.
probe() {
    : > "$BENCH_DIR/probe.txt"
    while [ -e "$BENCH_DIR/pruning" ]; do
        local start end; start=$(now); ctl list --limit 1 >/dev/null 2>&1; end=$(now)
        ms "$start" "$end" >> "$BENCH_DIR/probe.txt"
    done
}

fresh_copy() {
    stop_daemon
    rm -f "$DB-wal" "$DB-shm"; cp "$BENCH_DIR/filled.db" "$DB"
    start_daemon
    sync
}

: > "$BENCH_DIR/prune.txt"
for run in $(seq "$PRUNE_RUNS"); do
    fresh_copy
    start=$(now); pruned=$(ctl --json prune | grep -o '[0-9]*'); end=$(now)
    seconds=$(echo "$end - $start" | bc -l); echo "$seconds" >> "$BENCH_DIR/prune.txt"
    printf 'prune run %d: %d jobs in %.2f s\n' "$run" "$pruned" "$seconds"
done
printf 'prune of %d jobs: median %.2f s (%.2f–%.2f, %d runs)\n' "$JOBS" "$(median < "$BENCH_DIR/prune.txt")" \
    "$(sort -g "$BENCH_DIR/prune.txt" | head -1)" "$(sort -g "$BENCH_DIR/prune.txt" | tail -1)" "$PRUNE_RUNS"

fresh_copy
touch "$BENCH_DIR/pruning"; probe & prober=$!
start=$(now); pruned=$(ctl --json prune | grep -o '[0-9]*'); end=$(now)
rm "$BENCH_DIR/pruning"; wait "$prober"
printf 'prune with list --limit 1 in a loop: %d jobs in %.2f s; %d answers meanwhile, median %.0f ms, longest %.0f ms\n' \
    "$pruned" "$(echo "$end - $start" | bc -l)" "$(wc -l < "$BENCH_DIR/probe.txt")" "$(median < "$BENCH_DIR/probe.txt")" \
    "$(sort -g "$BENCH_DIR/probe.txt" | tail -1)"
runs "list --limit 100 (after the prune)" ctl list --limit 100

fresh_copy
start=$(now); pruned=$(ctl --json prune --older-than 30d | grep -o '[0-9]*'); end=$(now)
printf 'prune --older-than 30d: %d jobs in %.2f s\n' "$pruned" "$(echo "$end - $start" | bc -l)"
start=$(now); pruned=$(ctl --json prune --older-than 30d | grep -o '[0-9]*'); end=$(now)
printf 'prune --older-than 30d again (only what aged past 30 days meanwhile): %d jobs in %.0f ms\n' "$pruned" "$(ms "$start" "$end")"
stop_daemon
echo "after: integrity_check $(sqlite3 "$DB" 'PRAGMA integrity_check'), foreign_key_check [$(sqlite3 "$DB" 'PRAGMA foreign_key_check')]," \
     "jobs $(sqlite3 "$DB" 'SELECT count(*) FROM jobs'), attempts $(sqlite3 "$DB" 'SELECT count(*) FROM attempts')," \
     "backup_files $(sqlite3 "$DB" 'SELECT count(*) FROM backup_files')"
