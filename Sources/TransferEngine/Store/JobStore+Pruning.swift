/// A job a prune may delete: what the scheduler needs to tell whether it still holds it.
struct PruneCandidate: Equatable, Sendable {
    var id: JobID
    var batch: Int64?
}

/// Where a prune goes on: the state it is in (an index into `PruneCriteria.states`) and the
/// last job it took there, by end and id. Within a batch (`--batch`) only `id` counts.
struct PruneCursor: Equatable, Sendable {
    var state = 0
    var finishedAt = Int64.min
    var id = JobID(rawValue: 0)
}

/// Deleting history: ended jobs with every row that belongs to them. Both steps run on the
/// store's queue, each in its own transaction (the candidates in a piece of `StoreQueue`, the
/// deletion `alone`), so a huge prune holds the write lock for one chunk at a time. Thread: the
/// store's queue.
extension JobStore {
    /// What may go, besides having ended: no completion hook of the job still due, no server
    /// copy of a cancelled upload still to discard (its session is what the next start asks the
    /// server to discard with), and no job of its batch unfinished or the batch's hook still due
    /// — a batch is judged, and its hook runs, on all of its jobs. (The subqueries are not
    /// correlated: SQLite runs each once.)
    private static let prunable = """
        state IN ('completed', 'failed', 'cancelled')
        AND NOT (state = 'cancelled' AND upload_session IS NOT NULL)
        AND id NOT IN (SELECT job_id FROM pending_hooks WHERE job_id IS NOT NULL)
        AND (batch_id IS NULL OR batch_id NOT IN (
            SELECT batch_id FROM jobs WHERE state IN ('queued', 'running', 'paused', 'waiting') AND batch_id IS NOT NULL
            UNION ALL SELECT batch_id FROM pending_hooks WHERE job_id IS NULL AND batch_id IS NOT NULL))
        """

    /// Up to `limit` jobs after `cursor` that `criteria` selects and that may go, ended before
    /// `cutoff` (nil: any time), with the cursor to go on from (nil once every state is done).
    /// Oldest end first, one state at a time (`jobs_by_end`: the read stops at the cutoff);
    /// within a batch by id (`jobs_by_batch`).
    func pruneCandidates(_ criteria: PruneCriteria, cutoff: Timestamp?, after cursor: PruneCursor,
                         limit: Int) throws -> (candidates: [PruneCandidate], next: PruneCursor?) {
        let before = cutoff?.rawValue ?? Int64.max
        if let batch = criteria.batch {
            let rows = try connection.query(Self.candidatesInBatchQuery(criteria.states),
                                            [batch, cursor.id.rawValue, before, limit]) { row in
                PruneCandidate(id: JobID(rawValue: row.int64()), batch: row.optionalInt64())
            }
            guard rows.count == limit, let last = rows.last else { return (rows, nil) }
            return (rows, PruneCursor(id: last.id))
        }
        guard criteria.states.indices.contains(cursor.state) else { return ([], nil) }
        let rows = try connection.query(Self.candidatesQuery,
                                        [criteria.states[cursor.state].rawValue, before, cursor.finishedAt,
                                         cursor.id.rawValue, limit]) { row in
            (PruneCandidate(id: JobID(rawValue: row.int64()), batch: row.optionalInt64()), row.int64())
        }
        let candidates = rows.map(\.0)
        if rows.count == limit, case let (last, finishedAt)? = rows.last {
            return (candidates, PruneCursor(state: cursor.state, finishedAt: finishedAt, id: last.id))
        }
        return (candidates, cursor.state + 1 < criteria.states.count ? PruneCursor(state: cursor.state + 1) : nil)
    }

    /// The jobs of one state that ended before ?2, after the cursor (?3, ?4), oldest end first.
    static let candidatesQuery = """
        SELECT id, batch_id, finished_at FROM jobs
        WHERE state = ?1 AND finished_at IS NOT NULL AND finished_at < ?2 AND (finished_at, id) > (?3, ?4)
          AND \(prunable)
        ORDER BY finished_at, id LIMIT ?5
        """

    /// The jobs of batch ?1 in `states` after id ?2 that ended before ?3, by id.
    static func candidatesInBatchQuery(_ states: [JobState]) -> String {
        let words = states.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        return """
            SELECT id, batch_id FROM jobs
            WHERE batch_id = ?1 AND id > ?2 AND state IN (\(words)) AND finished_at < ?3 AND \(prunable)
            ORDER BY id LIMIT ?4
            """
    }

    /// Deletes those of `candidates` that may still go (`prunable`, checked again here), with
    /// every row that belongs to them: the rows of each table with a foreign key to `jobs`
    /// (attempts, resume data, upload answers; read from the schema, so a table a later migration
    /// adds is covered) and their hook runs; a batch of theirs left without jobs goes too, with
    /// its own hook runs. One transaction, made here (`StoreQueue.alone`), with foreign keys
    /// unenforced: the children go first, and checking every deleted job's children again made a
    /// chunk a third slower. Returns how many jobs and batches went.
    /// `backup_files` keeps its rows: a backup skips a file that was uploaded whether or not the
    /// job that did it is still there (ids are never reused: AUTOINCREMENT).
    func deletePruned(_ candidates: [PruneCandidate]) throws -> (jobs: Int, batches: Int) {
        guard !candidates.isEmpty else { return (0, 0) }
        return try transactionWithoutForeignKeys {
            try connection.execute("CREATE TEMP TABLE IF NOT EXISTS pruned (id INTEGER PRIMARY KEY)")
            defer { try? connection.execute("DELETE FROM temp.pruned") }
            try connection.run("INSERT INTO temp.pruned SELECT id FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) AND \(Self.prunable)",
                               Self.jsonArray(candidates.map(\.id.rawValue)))
            let jobs = connection.changes
            guard jobs > 0 else { return (0, 0) }
            for (table, column) in try jobChildTables() {
                try connection.execute("DELETE FROM \"\(table)\" WHERE \"\(column)\" IN (SELECT id FROM temp.pruned)")
            }
            try connection.execute("DELETE FROM hook_runs WHERE job_id IN (SELECT id FROM temp.pruned)")
            try connection.execute("DELETE FROM jobs WHERE id IN (SELECT id FROM temp.pruned)")
            let batches = Set(candidates.compactMap(\.batch))
            guard !batches.isEmpty else { return (jobs, 0) }
            // A batch that had a job a moment ago and has none now was emptied by pruning.
            let emptied = try connection.query("""
                SELECT id FROM batches WHERE id IN (SELECT value FROM json_each(?1))
                  AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.batch_id = batches.id)
                """, [Self.jsonArray(batches.sorted())]) { $0.int64() }
            if !emptied.isEmpty {
                let list = Self.jsonArray(emptied)
                try connection.run("DELETE FROM hook_runs WHERE job_id IS NULL AND batch_id IN (SELECT value FROM json_each(?1))", list)
                try connection.run("DELETE FROM batches WHERE id IN (SELECT value FROM json_each(?1))", list)
            }
            return (jobs, emptied.count)
        }
    }

    /// Every (table, column) with a foreign key to `jobs`.
    private func jobChildTables() throws -> [(String, String)] {
        try connection.query("""
            SELECT m.name, f."from" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
            WHERE m.type = 'table' AND f."table" = 'jobs' ORDER BY m.name
            """) { row in (row.text(), row.text()) }
    }

    /// Runs `body` in a transaction with foreign keys unenforced, on again after it. SQLite
    /// ignores the pragma inside a transaction: called inside one, `body` runs with them
    /// enforced (slower, and as correct: whoever deletes this way deletes the children first).
    func transactionWithoutForeignKeys<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("PRAGMA foreign_keys = OFF")
        defer { try? connection.execute("PRAGMA foreign_keys = ON") }
        return try connection.transaction(body)
    }

    /// `[1,2,3]`: a list of ids bound as one parameter and read back with `json_each`.
    private static func jsonArray(_ values: [Int64]) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }

    /// `PRAGMA foreign_key_check`: every violation as `table rowid parent`; empty when sound.
    public func foreignKeyCheck() throws -> [String] {
        try connection.query("PRAGMA foreign_key_check") { row in
            "\(row.text()) \(row.optionalInt64().map(String.init) ?? "?") \(row.text())"
        }
    }
}
