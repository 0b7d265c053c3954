-- Batches: named groups of jobs with their own completion hooks. A batch's state is derived
-- from its jobs' states, never stored.
CREATE TABLE batches (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    on_complete   TEXT,
    on_fail       TEXT,
    backup_dir    TEXT,      -- `backup DIR --to PREFIX`: what the batch backs up, and where to
    backup_prefix TEXT
);
CREATE INDEX batches_by_name ON batches (name, id);

-- A manifest line's idempotency key, unique within its batch; per-job completion hooks.
ALTER TABLE jobs ADD COLUMN job_key TEXT;
ALTER TABLE jobs ADD COLUMN on_complete TEXT;
ALTER TABLE jobs ADD COLUMN on_fail TEXT;
CREATE UNIQUE INDEX jobs_by_batch_key ON jobs (batch_id, job_key) WHERE job_key IS NOT NULL;
CREATE INDEX jobs_by_batch ON jobs (batch_id, id);

-- The files of directory backups: the version last queued for each path, and whether its upload
-- completed. A file whose size and mtime (or sha256) match a completed row is skipped.
CREATE TABLE backup_files (
    directory     TEXT    NOT NULL,
    prefix        TEXT    NOT NULL,
    relative_path TEXT    NOT NULL,
    size          INTEGER NOT NULL,
    mtime_ns      INTEGER NOT NULL,
    sha256        TEXT,
    job_id        INTEGER NOT NULL,
    done          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (directory, prefix, relative_path)
);
CREATE INDEX backup_files_by_job ON backup_files (job_id);

-- Every run of an --on-complete / --on-fail command: for a job or for a batch.
CREATE TABLE hook_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      INTEGER,
    batch_id    INTEGER,
    event       TEXT    NOT NULL,   -- 'complete' or 'fail'
    command     TEXT    NOT NULL,
    started_at  INTEGER NOT NULL,
    result      TEXT    NOT NULL    -- HookResult as JSON
);
CREATE INDEX hook_runs_by_job ON hook_runs (job_id);
CREATE INDEX hook_runs_by_batch ON hook_runs (batch_id);
