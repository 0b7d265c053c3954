-- The umask of the client that queued a job (e.g. 18 = 0o022): a download's new file and the
-- directories made for it get the modes that client would have given them. NULL: 0o022.
ALTER TABLE jobs ADD COLUMN umask INTEGER;
