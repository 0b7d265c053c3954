-- Resumable uploads to tus 1.0 servers and S3 (multipart), and S3 downloads.
-- `remote`: the protocol and its settings (JSON `RemoteOptions`: kind, S3 endpoint, region,
-- profile, chunk size). `upload_session`: what the server knows the upload by (JSON
-- `UploadSession`: the tus upload's URL, or the S3 UploadId and part size), recorded before
-- the first byte is sent; kept after a cancel until the server has discarded it.
ALTER TABLE jobs ADD COLUMN remote TEXT;
ALTER TABLE jobs ADD COLUMN upload_session TEXT;

-- The S3 parts the server acknowledged, each recorded with its ETag (and CRC32) as it completes.
CREATE TABLE upload_parts (
    job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    etag TEXT NOT NULL,
    size INTEGER NOT NULL,
    checksum TEXT,  -- its CRC32 (base64), which completing the upload names
    PRIMARY KEY (job_id, number)
) WITHOUT ROWID;

-- Sessions left to discard (a cancelled upload whose server could not be told yet).
CREATE INDEX jobs_upload_session ON jobs(state) WHERE upload_session IS NOT NULL;
