-- Uploads: the request method and what the body is made of (JSON: UploadSpec), persisted with
-- the job so that every attempt sends exactly the same bytes.
ALTER TABLE jobs ADD COLUMN method TEXT;
ALTER TABLE jobs ADD COLUMN upload TEXT;

-- The server's answer to an upload: status, headers and the first 64 KiB of the body.
CREATE TABLE upload_responses (
    job_id    INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    status    INTEGER NOT NULL,
    headers   TEXT    NOT NULL DEFAULT '[]',
    body      BLOB    NOT NULL,
    truncated INTEGER NOT NULL DEFAULT 0
);
