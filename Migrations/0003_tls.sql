-- Per-job TLS settings (JSON: TLSOptions): CA bundle, pinned key, client certificate, insecure.
ALTER TABLE jobs ADD COLUMN tls TEXT;
