-- The job queue: one row per job; times are Unix milliseconds.
CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT    NOT NULL CHECK (kind IN ('download', 'upload')),
    state         TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'paused', 'waiting',
                                                    'completed', 'failed', 'cancelled')),
    state_reason  TEXT,
    url           TEXT    NOT NULL,
    path          TEXT,
    headers       TEXT    NOT NULL DEFAULT '[]',  -- JSON array of "Name: value"
    sha256        TEXT,
    overwrite     INTEGER NOT NULL DEFAULT 0,
    priority      TEXT    NOT NULL DEFAULT 'normal' CHECK (priority IN ('high', 'normal', 'low')),
    batch_id      INTEGER,
    limit_rate    INTEGER,
    max_retries   INTEGER NOT NULL,
    bytes_done    INTEGER NOT NULL DEFAULT 0,
    bytes_total   INTEGER,
    attempts      INTEGER NOT NULL DEFAULT 0,
    http_status   INTEGER,
    error_code    TEXT,
    error_message TEXT,
    next_attempt_at INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    finished_at   INTEGER
);
CREATE INDEX jobs_by_state ON jobs (state, priority, id);

-- One row per HTTP attempt of a job.
CREATE TABLE attempts (
    job_id        INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    number        INTEGER NOT NULL,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER,
    range_start   INTEGER NOT NULL DEFAULT 0,
    http_status   INTEGER,
    error_code    TEXT,
    error_message TEXT,
    bytes         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, number)
);

-- What a download needs to continue: bytes durable in partial_path, and the entity they came from.
CREATE TABLE resume_data (
    job_id         INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    partial_path   TEXT    NOT NULL,
    bytes_durable  INTEGER NOT NULL DEFAULT 0,
    etag           TEXT,
    last_modified  TEXT,
    bytes_total    INTEGER,
    -- 1 once the partial file is complete, synced and verified: only the rename is left.
    finalizing     INTEGER NOT NULL DEFAULT 0
);

-- Daemon-wide settings that outlive a restart (global limits, ...).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
