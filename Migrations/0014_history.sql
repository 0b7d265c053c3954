-- History at scale (issue 14 item 4). `list --state S` pages newest first by (state, id), a seek
-- at any depth: with jobs_by_state (state, priority, id) alone SQLite sorted every job in the
-- state (1.7 s for 1,000,000 completed ones).
CREATE INDEX jobs_by_state_id ON jobs (state, id);
-- It serves every query the older one did (none orders by priority: the run queue is in memory),
-- and every write, a prune's deletes most of all, has one index less to keep up.
DROP INDEX jobs_by_state;
-- `prune` and `--keep-history` take ended jobs oldest end first, state by state, from a cursor,
-- and stop at the cutoff: a prune with nothing to do reads nothing. Only ended jobs have a
-- finished_at, so unfinished ones are not in it.
CREATE INDEX jobs_by_end ON jobs (state, finished_at, id) WHERE finished_at IS NOT NULL;
-- Every transferd sets finished_at when a job ends; a row that lacks it ended when it last changed.
UPDATE jobs SET finished_at = updated_at
WHERE finished_at IS NULL AND state IN ('completed', 'failed', 'cancelled');
