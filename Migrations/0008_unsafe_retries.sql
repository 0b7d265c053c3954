-- POST jobs: the Idempotency-Key every attempt carries (drawn when the job is queued, before
-- its first attempt), and whether the user allowed retries after the server may have acted
-- on the request (`--retry-unsafe`).
ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
ALTER TABLE jobs ADD COLUMN retry_unsafe INTEGER NOT NULL DEFAULT 0;
-- Why a failed attempt was not tried again (RetryRefusal), when it was not.
ALTER TABLE attempts ADD COLUMN not_retried TEXT;
