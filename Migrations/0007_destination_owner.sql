-- One owner per destination: `destination` is the canonical path of a download's destination
-- (`..`, relative parts and symlinked directories resolved) while the job owns it, that is until
-- it ends; NULL otherwise. The unique index makes a second owner impossible, whatever queues it.
ALTER TABLE jobs ADD COLUMN destination TEXT;
UPDATE jobs SET destination = path
WHERE id IN (SELECT min(id) FROM jobs
             WHERE kind = 'download' AND path IS NOT NULL AND state IN ('queued', 'running', 'paused', 'waiting')
             GROUP BY path);
CREATE UNIQUE INDEX jobs_by_destination ON jobs (destination) WHERE destination IS NOT NULL;

-- The partial file as transferd last left it (device, inode, size, mtime), recorded with every
-- checkpoint: a file changed by anyone else while its job was not running is not continued.
-- `file_writing` is 1 when the identity was taken while an attempt could still write after it.
ALTER TABLE resume_data ADD COLUMN file_device INTEGER;
ALTER TABLE resume_data ADD COLUMN file_inode INTEGER;
ALTER TABLE resume_data ADD COLUMN file_size INTEGER;
ALTER TABLE resume_data ADD COLUMN file_mtime_ns INTEGER;
ALTER TABLE resume_data ADD COLUMN file_writing INTEGER NOT NULL DEFAULT 0;

-- Why an attempt started from byte 0 although the job had bytes (a stable word), if it did.
ALTER TABLE attempts ADD COLUMN started_over TEXT;
