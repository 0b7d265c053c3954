-- What each attempt measured (libcurl's timings, in milliseconds from the attempt's start).
ALTER TABLE attempts ADD COLUMN metrics TEXT;
