import FoundationEssentials

/// Batches and the files of directory backups.
extension JobStore {
    // MARK: Batches

    private static let batchColumns = "id, name, created_at, on_complete, on_fail, backup_dir, backup_prefix"

    private static func batch(_ row: inout SQLiteRow) -> BatchRecord {
        let id = row.int64()
        let name = row.text()
        let createdAt = Timestamp(rawValue: row.int64())
        let onComplete = row.optionalText()
        let onFail = row.optionalText()
        let directory = row.optionalText()
        let prefix = row.optionalText()
        let backup = directory.flatMap { directory in prefix.map { BackupTarget(directory: directory, prefix: $0) } }
        return BatchRecord(id: id, name: name, createdAt: createdAt, onComplete: onComplete, onFail: onFail, backup: backup)
    }

    public func createBatch(name: String, onComplete: String?, onFail: String?, backup: BackupTarget?,
                            now: Timestamp = .now) throws -> BatchRecord {
        try connection.run("""
            INSERT INTO batches (name, created_at, on_complete, on_fail, backup_dir, backup_prefix) VALUES (?, ?, ?, ?, ?, ?)
            """, name, now.rawValue, onComplete, onFail, backup?.directory, backup?.prefix)
        return BatchRecord(id: connection.lastInsertRowID, name: name, createdAt: now, onComplete: onComplete,
                           onFail: onFail, backup: backup)
    }

    public func batchRecord(_ id: Int64) throws -> BatchRecord? {
        try connection.query("SELECT \(Self.batchColumns) FROM batches WHERE id = ?", [id], Self.batch).first
    }

    public func newestBatch(named name: String) throws -> BatchRecord? {
        try connection.query("SELECT \(Self.batchColumns) FROM batches WHERE name = ? ORDER BY id DESC LIMIT 1",
                             [name], Self.batch).first
    }

    /// Batches newest first.
    public func batchRecords(limit: Int = 1000) throws -> [BatchRecord] {
        try connection.query("SELECT \(Self.batchColumns) FROM batches ORDER BY id DESC LIMIT ?", [limit], Self.batch)
    }

    /// A batch's jobs by state and its bytes (cancelled jobs do not count towards the bytes);
    /// `bytesTotal` is nil while any counted job's size is unknown. The sums saturate (`total()`
    /// is SQLite's sum that does not fail on overflow; reading it as an integer clamps).
    public func batchTotals(_ id: Int64) throws -> (counts: [JobState: Int], bytesDone: Int64, bytesTotal: Int64?) {
        let rows = try connection.query("""
            SELECT state, count(*), total(bytes_done), total(coalesce(bytes_total, 0)), sum(bytes_total IS NULL)
            FROM jobs WHERE batch_id = ? GROUP BY state
            """, [id]) { row in (JobState(rawValue: row.text()), row.int(), row.int64(), row.int64(), row.int()) }
        var counts: [JobState: Int] = [:]
        var done: Int64 = 0
        var total: Int64 = 0
        var unknown = false
        for case let (state?, count, bytesDone, bytesTotal, unknownSizes) in rows {
            counts[state] = count
            guard state != .cancelled else { continue }
            done = done.saturatingAdd(bytesDone)
            total = total.saturatingAdd(bytesTotal)
            if unknownSizes > 0 { unknown = true }
        }
        return (counts, done, unknown ? nil : total)
    }

    /// The keys already used in a batch.
    public func keys(inBatch batch: Int64) throws -> Set<String> {
        Set(try connection.query("SELECT job_key FROM jobs WHERE batch_id = ? AND job_key IS NOT NULL", [batch]) { $0.text() })
    }

    // MARK: Backups

    /// The version of a file last queued by a backup to the same place.
    public struct BackupFileRecord: Sendable {
        public var size: Int64
        public var modified: Int64
        public var sha256: String?
        /// Its upload completed.
        public var done: Bool
        /// The state of the job that uploads it (nil when that job is gone).
        public var jobState: JobState?
    }

    public func backupFile(_ target: BackupTarget, _ relativePath: String) throws -> BackupFileRecord? {
        try connection.query("""
            SELECT f.size, f.mtime_ns, f.sha256, f.done, j.state FROM backup_files f LEFT JOIN jobs j ON j.id = f.job_id
            WHERE f.directory = ? AND f.prefix = ? AND f.relative_path = ?
            """, [target.directory, target.prefix, relativePath]) { row in
            BackupFileRecord(size: row.int64(), modified: row.int64(), sha256: row.optionalText(), done: row.bool(),
                             jobState: row.optionalText().flatMap(JobState.init(rawValue:)))
        }.first
    }

    public func recordBackupFile(_ target: BackupTarget, _ relativePath: String, source: SourceFile, sha256: String?,
                                 job: JobID) throws {
        try connection.run("""
            INSERT OR REPLACE INTO backup_files (directory, prefix, relative_path, size, mtime_ns, sha256, job_id, done)
            VALUES (?, ?, ?, ?, ?, ?, ?, 0)
            """, target.directory, target.prefix, relativePath, source.size, source.modified, sha256, job.rawValue)
    }

    /// The job's upload completed: a later backup skips its file while it stays the same.
    public func markBackupUploaded(_ job: JobID) throws {
        try connection.run("UPDATE backup_files SET done = 1 WHERE job_id = ?", job.rawValue)
    }
}
