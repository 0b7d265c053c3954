-- A download into a directory (`-O`, `-o DIR/`): the directory, until the server's answer
-- names the file (`path` stays NULL until then). `on_exists`: what to do when the name is
-- taken — 'fail' (NULL: as before), 'overwrite' (also when `overwrite` is 1), 'rename'.
ALTER TABLE jobs ADD COLUMN output_dir TEXT;
ALTER TABLE jobs ADD COLUMN on_exists TEXT;
