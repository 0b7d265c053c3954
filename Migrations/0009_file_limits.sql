-- The umask of the client that queued a job (e.g. 18 = 0o022): a download's new file and the
-- directories made for it get the modes that client would have given them. NULL: 0o022.
ALTER TABLE jobs ADD COLUMN umask INTEGER;

-- `--max-filesize`: a download whose body passes this many bytes fails with `too_large` and its
-- partial file is removed. NULL: the daemon's --max-filesize, if any.
ALTER TABLE jobs ADD COLUMN max_filesize INTEGER;
