-- Completion hooks due but not yet run to the end: written in the same transaction as the
-- job's end (or when a batch's end is seen), deleted when the run is recorded in hook_runs.
-- A daemon that stops or crashes in between runs them at its next start (at least once).
CREATE TABLE pending_hooks (
    key          TEXT    PRIMARY KEY,
    job_id       INTEGER,
    batch_id     INTEGER,
    event        TEXT    NOT NULL,   -- 'complete' or 'fail'
    command      TEXT    NOT NULL,
    environment  TEXT    NOT NULL,   -- JSON object of the TRANSFERD_* variables
    created_at   INTEGER NOT NULL
);
