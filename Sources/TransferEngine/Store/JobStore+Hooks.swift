import FoundationEssentials

/// Completion hooks: the ones due, and how each run ended.
extension JobStore {
    func addPendingHook(_ hook: PendingHook, now: Timestamp = .now) throws {
        let environment = try JobStore.json(hook.environment)
        try connection.run("""
            INSERT INTO pending_hooks (key, job_id, batch_id, event, command, environment, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, hook.key, hook.job?.rawValue, hook.batch, hook.event, hook.command, environment, now.rawValue)
    }

    /// Hooks that were due when the daemon stopped, oldest first.
    func pendingHooks() throws -> [PendingHook] {
        try connection.query("""
            SELECT key, job_id, batch_id, event, command, environment FROM pending_hooks ORDER BY created_at, rowid
            """) { row in
            PendingHook(key: row.text(), job: row.optionalInt64().map(JobID.init(rawValue:)), batch: row.optionalInt64(),
                        event: row.text(), command: row.text(),
                        environment: (try? JSONDecoder().decode([String: String].self, from: Data(row.text().utf8))) ?? [:])
        }
    }

    /// Records how a due hook ran, and that it is no longer due.
    func finishHook(_ key: String, _ run: HookRun) throws {
        try transaction {
            try connection.run("DELETE FROM pending_hooks WHERE key = ?", key)
            try recordHookRun(run)
        }
    }

    /// Batches whose every job has ended, with a hook for the state they ended in that has not
    /// run since (nor is due): a daemon that stopped just after a batch's last job ended looks
    /// at them again.
    func batchesAwaitingHooks() throws -> [Int64] {
        try connection.query("""
            SELECT b.id FROM batches b
            WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id)
              AND CASE  -- the hook its end state runs (BatchState.derive) must exist
                    WHEN EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id AND j.state = 'failed')
                        THEN b.on_fail IS NOT NULL
                    WHEN NOT EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id AND j.state = 'completed') THEN 0
                    ELSE b.on_complete IS NOT NULL
                  END
              AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id
                              AND j.state NOT IN ('completed', 'failed', 'cancelled'))
              AND NOT EXISTS (SELECT 1 FROM pending_hooks p WHERE p.batch_id = b.id AND p.job_id IS NULL)
              AND NOT EXISTS (SELECT 1 FROM hook_runs h WHERE h.batch_id = b.id AND h.job_id IS NULL
                              AND h.started_at >= (SELECT max(finished_at) FROM jobs j WHERE j.batch_id = b.id))
            ORDER BY b.id
            """) { $0.int64() }
    }

    public func recordHookRun(_ run: HookRun) throws {
        let result = try JobStore.json(run.result)
        try connection.run("""
            INSERT INTO hook_runs (job_id, batch_id, event, command, started_at, result) VALUES (?, ?, ?, ?, ?, ?)
            """, run.job?.rawValue, run.batch, run.event, run.command, run.startedAt.rawValue, result)
    }

    /// The hook runs of a job (`job`) or of a batch itself (`batch`), oldest first.
    public func hookRuns(job: JobID? = nil, batch: Int64? = nil) throws -> [HookRun] {
        try connection.query("""
            SELECT job_id, batch_id, event, command, started_at, result FROM hook_runs
            WHERE (?1 IS NOT NULL AND job_id = ?1) OR (?1 IS NULL AND job_id IS NULL AND batch_id = ?2) ORDER BY id
            """, [job?.rawValue, batch]) { row in
            let job = row.optionalInt64().map(JobID.init(rawValue:))
            let batch = row.optionalInt64()
            let event = row.text()
            let command = row.text()
            let startedAt = Timestamp(rawValue: row.int64())
            let result = (try? JSONDecoder().decode(HookResult.self, from: Data(row.text().utf8)))
                ?? HookResult(startError: "unreadable record")
            return HookRun(job: job, batch: batch, event: event, command: command, startedAt: startedAt, result: result)
        }
    }
}
