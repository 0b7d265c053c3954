-- Why a waiting job waits, as a word the scheduler decides on (never the reason's text):
-- 'offline' (its host does not answer: a probe queues it again), 'backoff' (until
-- next_attempt_at), 'descriptors' (none to spare). NULL unless the job is waiting.
ALTER TABLE jobs ADD COLUMN wait_reason TEXT;
-- Waiting jobs of an older transferd said so only in their text: read it this once.
UPDATE jobs SET wait_reason = CASE WHEN state_reason LIKE 'offline%' THEN 'offline' ELSE 'backoff' END
WHERE state = 'waiting';
