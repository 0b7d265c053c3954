-- When the job's first attempt began (Unix ms), kept across attempts: with finished_at it
-- gives the elapsed time and average rate `watch` shows for a finished job.
ALTER TABLE jobs ADD COLUMN started_at INTEGER;
UPDATE jobs SET started_at = (SELECT min(started_at) FROM attempts WHERE attempts.job_id = jobs.id);
