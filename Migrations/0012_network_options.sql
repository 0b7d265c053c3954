-- Per-job network options (JSON: NetworkOptions): proxy, no-proxy hosts, connect and total
-- timeouts, --compressed, user and password (a secret, as headers are), netrc file, IP version
-- and --resolve entries. NULL: the defaults.
ALTER TABLE jobs ADD COLUMN network TEXT;

-- The partial file holds bytes libcurl decoded from a compressed response (--compressed and a
-- Content-Encoding): offsets in them are not the server's, so they are never continued by range.
ALTER TABLE resume_data ADD COLUMN decoded INTEGER NOT NULL DEFAULT 0;
