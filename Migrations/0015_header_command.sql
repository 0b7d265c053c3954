-- `--header-command`: a shell command run before each attempt whose output lines
-- (`Name: value`) are added to that attempt's request (credentials that outlive a long queue).
ALTER TABLE jobs ADD COLUMN header_command TEXT;
