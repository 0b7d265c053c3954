import FoundationEssentials

/// Resumable uploads' sessions: what the server knows each by (recorded before the first byte
/// is sent), the S3 parts it acknowledged, and the sessions a cancel left to discard.
extension JobStore {
    /// The job's session and its acknowledged parts in part order (nil: none recorded).
    public func uploadSession(_ id: JobID) throws -> (session: UploadSession, parts: [UploadedPart])? {
        let texts = try connection.query("SELECT upload_session FROM jobs WHERE id = ?", [id.rawValue]) { $0.optionalText() }
        guard let text = texts.first ?? nil else { return nil }
        let session = try JSONDecoder().decode(UploadSession.self, from: Data(text.utf8))
        let parts = try connection.query("SELECT number, etag, size, checksum FROM upload_parts WHERE job_id = ? ORDER BY number",
                                         [id.rawValue]) { row in
            UploadedPart(number: Int(row.int64()), etag: row.text(), size: row.int64(), checksum: row.optionalText())
        }
        return (session, parts)
    }

    /// Records a new session for the job (or none), forgetting the parts of any earlier one.
    public func saveUploadSession(_ id: JobID, _ session: UploadSession?) throws {
        let text = try session.map { try JobStore.json($0) }
        try transaction {
            try connection.run("DELETE FROM upload_parts WHERE job_id = ?", id.rawValue)
            try connection.run("UPDATE jobs SET upload_session = ? WHERE id = ?", text, id.rawValue)
        }
    }

    /// Records an acknowledged part and the bytes the server now holds.
    public func recordPart(_ id: JobID, _ part: UploadedPart, bytesDone: Int64) throws {
        try transaction {
            try connection.run("""
                INSERT INTO upload_parts (job_id, number, etag, size, checksum) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (job_id, number) DO UPDATE SET etag = excluded.etag, size = excluded.size,
                                                           checksum = excluded.checksum
                """, id.rawValue, part.number, part.etag, part.size, part.checksum)
            try connection.run("UPDATE jobs SET bytes_done = ? WHERE id = ?", bytesDone, id.rawValue)
        }
    }

    /// The server's list of an upload's parts, in place of the recorded one.
    public func replaceParts(_ id: JobID, _ parts: [UploadedPart], bytesDone: Int64) throws {
        try transaction {
            try connection.run("DELETE FROM upload_parts WHERE job_id = ?", id.rawValue)
            for part in parts {
                try connection.run("INSERT INTO upload_parts (job_id, number, etag, size, checksum) VALUES (?, ?, ?, ?, ?)",
                                   id.rawValue, part.number, part.etag, part.size, part.checksum)
            }
            try connection.run("UPDATE jobs SET bytes_done = ? WHERE id = ?", bytesDone, id.rawValue)
        }
    }

    /// The bytes the server reported holding (a tus offset), recorded as the job's progress.
    public func recordRemoteBytes(_ id: JobID, _ bytes: Int64) throws {
        try connection.run("UPDATE jobs SET bytes_done = ? WHERE id = ?", bytes, id.rawValue)
    }

    /// Cancelled jobs whose server still holds their unfinished upload: discarded at start.
    public func sessionsToDiscard() throws -> [(job: Job, session: UploadSession)] {
        let jobs = try connection.query("""
            SELECT \(Self.jobColumns), upload_session FROM jobs
            WHERE upload_session IS NOT NULL AND state = 'cancelled' ORDER BY id
            """) { row in (Self.job(&row), row.optionalText()) }
        return jobs.compactMap { job, text in
            guard let text, let session = try? JSONDecoder().decode(UploadSession.self, from: Data(text.utf8)) else { return nil }
            return (job, session)
        }
    }
}
