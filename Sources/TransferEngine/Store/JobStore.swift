import FoundationEssentials

/// The persistent queue: jobs, their attempts and their resume data in one SQLite file
/// (WAL, synchronous=FULL so an acknowledged change survives power loss).
/// Thread: one at a time; the daemon confines it to `StoreQueue`.
public final class JobStore {
    let connection: SQLiteConnection
    public let path: String
    /// The directory of the database (the daemon's state directory), as given and canonical:
    /// no download may write inside it. Resolved once, not for every job queued.
    private lazy var stateDirectory = String(path[..<(RawPath.lastSlash(in: path) ?? path.startIndex)])
    private lazy var stateRoot = DestinationPath.root(of: stateDirectory)
    /// While a batch is queued: the canonical spelling of the directories its files are in.
    var batchDirectories: [String: String]?

    public init(path: String) throws {
        self.path = path
        do {
            connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = FULL")
            try connection.execute("PRAGMA foreign_keys = ON")
            // The schema's CHECKs on `jobs` (`kind`, `state`, `priority` IN a list of words) are
            // not run for the daemon's own writes: SQLite builds a temporary index of an IN list
            // of three or more words at every INSERT and at every UPDATE of the column, which
            // made a job's insert ~2.5 times and a state change ~2 times as costly (design.md).
            // Every word the daemon writes is an enum's raw value, and rows are checked when read
            // (`RowCheck`, `quarantineInvalidJobs`); other writers (sqlite3) still get the CHECKs.
            try connection.execute("PRAGMA ignore_check_constraints = ON")
        } catch {
            throw StoreError.cannotOpen(path: path, reason: error.message)
        }
        try Migrator().migrate(connection)
    }

    // MARK: Jobs

    static let jobColumns = """
        id, kind, state, state_reason, url, path, headers, sha256, overwrite, priority, batch_id,
        limit_rate, max_retries, bytes_done, bytes_total, attempts, http_status, error_code,
        error_message, next_attempt_at, created_at, updated_at, finished_at, method, upload, tls, job_key,
        on_complete, on_fail, umask, max_filesize, idempotency_key, retry_unsafe, wait_reason, started_at,
        output_dir, on_exists, header_command, network, remote
        """

    /// A value as the text of a JSON column (read back by `RowCheck.json`), encoded without the
    /// tree of values `JSONEncoder` builds first (a record's metrics are encoded for every attempt).
    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONStreamEncoder().encode(value), as: UTF8.self)
    }

    /// A row as a job, whatever it holds (see `JobRow`; rows that cannot run are quarantined at start).
    static func job(_ row: inout SQLiteRow) -> Job { JobRow(&row).job }

    /// Queues a new job (with its resume state, when it continues earlier bytes).
    public func insert(_ new: NewJob, maxRetries: Int, resume: ResumeState?, upload: UploadSpec? = nil,
                       bytesTotal: Int64? = nil, key: String? = nil, now: Timestamp = .now) throws -> Job {
        let row = try PreparedJob(new, maxRetries: maxRetries, upload: upload, bytesDone: resume?.bytesDurable ?? 0,
                                  bytesTotal: resume?.bytesTotal ?? bytesTotal, key: key, now: now)
        return try insert(row, now: now, resume: resume)
    }

    /// Queues a new job whose row is decided (`PreparedJob`), in `batch` when given: claims
    /// its destination, inserts it, and writes its resume state.
    func insert(_ row: PreparedJob, batch: Int64? = nil, now: Timestamp, resume: ResumeState? = nil) throws -> Job {
        var job = row.job.fields
        job.stamp(batch: batch, now: now)
        return try connection.transaction {
            var claimed: String?
            if job.kind == .download, let wanted = job.path {
                // The unique index `jobs_by_destination` refuses a destination another job owns;
                // its owner is looked up only then (`taken`), not before every insert.
                if let destination = row.destination {
                    claimed = try claimable(destination, path: wanted)
                } else {
                    (job.path, claimed) = row.onExists == .rename
                        ? try destination(wanted, for: nil, onExists: .rename) : (wanted, try canonicalDestination(wanted))
                }
            }
            do {
                try connection.run(Self.insertOne) { bind in Self.bind(job, row, claimed, now: now, to: &bind) }
            } catch let error as SQLiteError where error.code == .constraintUnique {
                guard let claimed, let wanted = job.path, let owner = try owner(of: claimed, other: nil) else { throw error }
                throw DestinationRefusal.taken(path: wanted, owner: owner)
            }
            job.id = JobID(rawValue: connection.lastInsertRowID)
            if let resume {
                try saveResume(job.id, resume)  // which writes the job's row again
                guard let stored = try self.job(job.id) else { throw StoreError.unknownJob(job.id) }
                return stored
            }
            // The row as just written, without reading it back (a fifth of a manifest's queueing).
            assert((try? self.job(job.id)) == Job(job), "job \(job.id) as inserted is not the job as stored")
            return Job(job)
        }
    }

    /// Inserts the rows of new downloads made while their manifest came (`PreparedJob`, their
    /// destinations resolved), in one statement: one statement's setup, and one update of the
    /// table's id sequence, for all of them (a manifest's queueing transaction spent most of
    /// its time in SQLite, row by row). At most `insertBlock` rows. A row that `insert` would
    /// refuse fails them all: `insert` then tells which. Returns the jobs as inserted.
    func insert(_ rows: [PreparedJob], batch: Int64, now: Timestamp) throws -> [Job] {
        precondition(rows.count <= Self.insertBlock, "at most \(Self.insertBlock) rows to a statement")
        // Each job's fields are copied once, out of the row's box into its own, and then changed
        // and read in place: a `Job.Fields` copied is some twenty references retained and
        // released, and the block's jobs were copied nine times each on their way.
        var jobs: [Job] = []
        var claims: [String?] = []
        jobs.reserveCapacity(rows.count)
        claims.reserveCapacity(rows.count)
        for row in rows {
            precondition(row.job.kind == .download && row.onExists != .rename, "only a download's row is made ahead")
            var job = row.job
            job.fields.stamp(batch: batch, now: now)
            claims.append(try job.fields.path.map { wanted in
                try row.destination.map { try claimable($0, path: wanted) } ?? canonicalDestination(wanted)
            })
            jobs.append(job)
        }
        try connection.transaction {
            try insertRows(jobs, rows, destinations: claims, now: now)
        }
        // One statement's ids are consecutive: it inserts alone, and the table's ids only grow.
        let first = connection.lastInsertRowID - Int64(rows.count) + 1
        for index in jobs.indices {
            jobs[index].fields.id = JobID(rawValue: first + Int64(index))
            assert((try? self.job(jobs[index].id)) == jobs[index], "job \(jobs[index].id) as inserted is not the job as stored")
        }
        return jobs
    }

    /// Rows to one statement of `insert(_:batch:now:)`: 32 parameters each, far under SQLite's
    /// limit of 32,766, and few distinct statements for the connection to keep prepared.
    static let insertBlock = 50

    /// New jobs' rows in one statement, in order.
    private func insertRows(_ jobs: [Job], _ rows: [PreparedJob], destinations: [String?], now: Timestamp)
        throws(SQLiteError) {
        let sql = switch jobs.count {
        case 1: Self.insertOne
        case Self.insertBlock: Self.insertWhole
        default: Self.insertSQL(rows: jobs.count)
        }
        try connection.run(sql) { bind in
            for index in jobs.indices { Self.bind(jobs[index].fields, rows[index], destinations[index], now: now, to: &bind) }
        }
    }

    /// One new job's values, in the columns' order of `insertSQL`; the fields read in place.
    private static func bind(_ job: borrowing Job.Fields, _ row: PreparedJob, _ destination: String?, now: Timestamp,
                             to bind: inout SQLiteBinder) {
        bind(job.kind.rawValue); bind(job.state.rawValue); bind(job.stateReason); bind(job.url); bind(job.path)
        bind(row.headers); bind(job.sha256); bind(job.overwrite); bind(job.priority.rawValue); bind(job.batch)
        bind(job.limit); bind(job.maxRetries); bind(job.bytesDone); bind(job.bytesTotal); bind(now.rawValue)
        bind(now.rawValue); bind(job.method); bind(row.upload); bind(row.tls); bind(job.key); bind(job.onComplete)
        bind(job.onFail); bind(destination); bind(job.umask); bind(job.maxFilesize); bind(job.idempotencyKey)
        bind(job.retryUnsafe); bind(job.outputDirectory); bind(row.onExists?.rawValue); bind(job.headerCommand)
        bind(row.network); bind(row.remote)
    }

    /// The statement of `insertRows` for `rows` rows; those of one row and of a whole block made
    /// once (built and hashed again for each job, the one row's was the dearer part of a `download`).
    private static func insertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: 32).joined(separator: ", ") + ")"
        return """
            INSERT INTO jobs (kind, state, state_reason, url, path, headers, sha256, overwrite, priority,
                              batch_id, limit_rate, max_retries, bytes_done, bytes_total, created_at, updated_at,
                              method, upload, tls, job_key, on_complete, on_fail, destination, umask, max_filesize,
                              idempotency_key, retry_unsafe, output_dir, on_exists, header_command, network, remote)
            VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))
            """
    }

    private static let insertOne = insertSQL(rows: 1)
    private static let insertWhole = insertSQL(rows: insertBlock)

    // MARK: Destinations

    /// The canonical form of `path`, which no unfinished job but `id` owns and which is not
    /// inside the state directory (the database's); throws a `DestinationRefusal` otherwise.
    func claimableDestination(_ path: String, for id: JobID?) throws -> String {
        let canonical = try canonicalDestination(path)
        if let owner = try owner(of: canonical, other: id) { throw DestinationRefusal.taken(path: path, owner: owner) }
        return canonical
    }

    /// The canonical form of `path`, which is not inside the state directory.
    private func canonicalDestination(_ path: String) throws(DestinationRefusal) -> String {
        try claimable(DestinationPath.canonical(path, directories: &batchDirectories), path: path)
    }

    /// `canonical`, the canonical form of `path`, unless it is inside the state directory.
    private func claimable(_ canonical: String, path: String) throws(DestinationRefusal) -> String {
        if DestinationPath.isInside(canonical, root: stateRoot) {
            throw DestinationRefusal.stateDirectory(path: path, directory: stateDirectory)
        }
        return canonical
    }

    /// The unfinished job other than `id` whose destination `canonical` is.
    private func owner(of canonical: String, other id: JobID?) throws -> JobID? {
        try connection.query("SELECT id FROM jobs WHERE destination = ? AND id IS NOT ?",
                             [canonical, id?.rawValue]) { JobID(rawValue: $0.int64()) }.first
    }

    /// The destination `id` may claim for `path`, and its canonical spelling: `path` itself, or,
    /// with `rename`, the first of `name (1).ext`, `name (2).ext`, … that neither exists nor
    /// belongs to another unfinished job. Throws a `DestinationRefusal` when none is free.
    func destination(_ path: String, for id: JobID?, onExists: OnExists) throws -> (path: String, canonical: String) {
        guard onExists == .rename else { return (path, try claimableDestination(path, for: id)) }
        let directory = PartialFile.directory(of: path)
        let name = String(path.split(separator: "/").last ?? "")
        for number in 0..<1000 {
            let candidate = number == 0 ? path : (directory == "/" ? "/" : directory + "/") + ServerFileName.numbered(name, number)
            guard PartialFile.existing(at: candidate) == nil else { continue }
            do {
                return (candidate, try claimableDestination(candidate, for: id))
            } catch DestinationRefusal.taken {
                continue
            }
        }
        throw DestinationRefusal.taken(path: path, owner: id ?? JobID(rawValue: 0))
    }

    /// Names a download into a directory: `name` in its directory, as `onExists` says when that
    /// is taken (`fail`: a file there, or another job's, refuses it). Records the path and claims
    /// it; returns the path.
    public func name(_ id: JobID, directory: String, _ name: String, onExists: OnExists) throws -> String {
        let wanted = (directory.hasSuffix("/") ? directory : directory + "/") + name
        return try connection.transaction {
            if onExists != .rename, let existing = PartialFile.existing(at: wanted) {
                guard existing.isRegularFile else { throw TransferError.notRegularFile(path: wanted) }
                guard onExists == .overwrite else { throw TransferError.destinationExists(path: wanted) }
            }
            let (path, canonical) = try destination(wanted, for: id, onExists: onExists)
            try connection.run("UPDATE jobs SET path = ?, destination = ? WHERE id = ?", path, canonical, id.rawValue)
            return path
        }
    }

    /// Makes job `id` the owner of its destination again (before a failed download is retried).
    func claimDestination(of id: JobID, path: String) throws {
        try connection.transaction {
            let canonical = try claimableDestination(path, for: id)
            try connection.run("UPDATE jobs SET destination = ? WHERE id = ?", canonical, id.rawValue)
        }
    }

    /// An ended job owns nothing: clears claims a crash left between a claim and its state change.
    func releaseEndedDestinations() throws {
        try connection.run("""
            UPDATE jobs SET destination = NULL
            WHERE destination IS NOT NULL AND state IN ('completed', 'cancelled', 'failed')
            """)
    }

    public func job(_ id: JobID) throws -> Job? {
        try connection.query("SELECT \(Self.jobColumns) FROM jobs WHERE id = ?", [id.rawValue], Self.job).first
    }

    /// Jobs newest first, optionally in one state or batch; `before` pages on (ids below it).
    public func jobs(state: JobState? = nil, batch: Int64? = nil, before: JobID? = nil, limit: Int = 1000) throws -> [Job] {
        var values: [any SQLiteBindable] = [before?.rawValue ?? Int64.max, limit]
        if let state { values.append(state.rawValue) }
        if let batch { values.append(batch) }
        return try connection.query(Self.jobsQuery(state: state != nil, batch: batch != nil), values, Self.job)
    }

    /// The ids of a batch's jobs (from the `jobs_by_batch` index alone) and the jobs of it that
    /// have ended, newest first: what a `wait --batch` needs. The jobs that may still move are
    /// the decision core's; reading all of a 2,000-job batch whole took its wait ~20 ms of the
    /// store's time as the batch's transfers began.
    public func batchForWait(_ batch: Int64) throws -> (ids: [JobID], ended: [Job]) {
        let ids = try connection.query("SELECT id FROM jobs WHERE batch_id = ?", [batch]) { JobID(rawValue: $0.int64()) }
        return (ids, try connection.query(Self.endedInBatchQuery, [batch], Self.job))
    }

    private static let endedInBatchQuery = """
        SELECT \(jobColumns) FROM jobs WHERE batch_id = ?
            AND state IN (\(JobState.allCases.filter(\.hasEnded).map { "'\($0.rawValue)'" }.joined(separator: ", ")))
        ORDER BY id DESC
        """

    /// A page of `jobs`, with only the conditions asked for: each shape is planned on its own, so
    /// every page is a seek however deep (the rowid, `jobs_by_state_id`, `jobs_by_batch`), where
    /// one statement with `(? IS NULL OR state = ?)` could use no index for the state.
    static func jobsQuery(state: Bool, batch: Bool) -> String {
        let conditions = ["id < ?1"] + (state ? ["state = ?3"] : []) + (batch ? ["batch_id = ?\(state ? 4 : 3)"] : [])
        return "SELECT \(jobColumns) FROM jobs WHERE \(conditions.joined(separator: " AND ")) ORDER BY id DESC LIMIT ?2"
    }

    /// Fails every job that may still move (or be retried) whose row transferd could not have
    /// written: a number out of its range, a word it does not write, JSON that does not decode,
    /// in the row or its resume data. Run at start, before `unfinishedJobs`, so that one bad row
    /// costs its job, not the daemon (`invalid_job`, the message names the column).
    public func quarantineInvalidJobs(now: Timestamp = .now) throws -> [(JobID, InvalidJob)] {
        let candidates = "state NOT IN ('completed', 'cancelled') AND coalesce(error_code, '') != '\(InvalidJob.code)'"
        var invalid: [JobID: InvalidJob] = [:]
        for row in try connection.query("SELECT \(Self.jobColumns) FROM jobs WHERE \(candidates)", [], JobRow.init) {
            if let problem = row.problem { invalid[row.job.id] = problem }
        }
        let resumeRows = try connection.query("""
            SELECT job_id, \(ResumeRow.columns) FROM resume_data WHERE job_id IN (SELECT id FROM jobs WHERE \(candidates))
            """) { row in (JobID(rawValue: row.int64()), ResumeRow(&row).problem) }
        for case let (id, problem?) in resumeRows where invalid[id] == nil { invalid[id] = problem }
        guard !invalid.isEmpty else { return [] }
        let quarantined = invalid.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        // The row may break the schema's CHECKs too (an unknown state or kind): the connection
        // does not run them (`init`), so failing it does not fail.
        try connection.transaction {
            for (id, problem) in quarantined {
                try connection.run("""
                    UPDATE jobs SET state = 'failed', state_reason = ?, error_code = ?, error_message = ?,
                           next_attempt_at = NULL, wait_reason = NULL, finished_at = ?, updated_at = ?
                    WHERE id = ?
                    """, problem.message, InvalidJob.code, problem.message, now.rawValue, now.rawValue, id.rawValue)
            }
        }
        return quarantined
    }

    /// Every job that may still move: what the scheduler loads at start.
    public func unfinishedJobs() throws -> [Job] {
        try connection.query("""
            SELECT \(Self.jobColumns) FROM jobs
            WHERE state NOT IN ('completed', 'cancelled', 'failed') ORDER BY id
            """, [], Self.job)
    }

    public func countsByState() throws -> [JobState: Int] {
        let rows = try connection.query("SELECT state, count(*) FROM jobs GROUP BY state") { row in
            (JobState(rawValue: row.text()), row.int())
        }
        var counts: [JobState: Int] = [:]
        for (state, count) in rows { if let state { counts[state] = count } }
        return counts
    }

    /// Records a state change with everything that goes with it. `attempt`, `startedAt`: an
    /// attempt that began and ended since the row last changed (a start recorded with its end,
    /// `StateRecord.heldStart`): its number and start, in the same rewrite of the row.
    public func setState(_ id: JobID, _ change: StateChange, now: Timestamp = .now, attempt: Int? = nil,
                         startedAt: Timestamp? = nil) throws {
        try connection.run("""
            UPDATE jobs SET state = ?, state_reason = ?, error_code = ?, error_message = ?,
                   http_status = coalesce(?, http_status), next_attempt_at = ?,
                   finished_at = ?, bytes_done = coalesce(?, bytes_done), bytes_total = coalesce(?, bytes_total), updated_at = ?,
                   destination = CASE WHEN ? THEN NULL ELSE destination END, wait_reason = ?,
                   attempts = coalesce(?, attempts), started_at = coalesce(started_at, ?)
            WHERE id = ?
            """
        ) { bind in
            bind(change.state.rawValue); bind(change.reason); bind(change.error?.code); bind(change.error?.message)
            bind(change.httpStatus); bind(change.nextAttemptAt?.rawValue)
            bind(change.state.hasEnded ? now.rawValue : nil); bind(change.bytesDone); bind(change.bytesTotal)
            bind(now.rawValue); bind(change.state.hasEnded); bind(change.waitReason?.rawValue)
            bind(attempt); bind(startedAt?.rawValue); bind(id.rawValue)
        }
    }

    // MARK: Attempts

    /// Records attempt `number` as begun: the job `running`, a row in `attempts` — and, for a
    /// download, its resume state (`resume`), its byte counts set in the same UPDATE of the job
    /// (one rewrite of its row instead of two: the store's costliest statement per small file).
    public func beginAttempt(_ id: JobID, number: Int, rangeStart: Int64, startedOver: StartOverReason? = nil,
                             resume: ResumeState? = nil, now: Timestamp = .now) throws {
        try connection.transaction {
            if let resume {
                try upsertResume(id, resume)
                try connection.run("""
                    UPDATE jobs SET state = 'running', state_reason = NULL, attempts = ?, next_attempt_at = NULL, wait_reason = NULL,
                           started_at = coalesce(started_at, ?), bytes_done = ?, bytes_total = ?, updated_at = ? WHERE id = ?
                    """
                ) { bind in
                    bind(number); bind(now.rawValue); bind(resume.bytesDurable); bind(resume.bytesTotal); bind(now.rawValue)
                    bind(id.rawValue)
                }
            } else {
                try connection.run("""
                    UPDATE jobs SET state = 'running', state_reason = NULL, attempts = ?, next_attempt_at = NULL, wait_reason = NULL,
                           started_at = coalesce(started_at, ?), updated_at = ? WHERE id = ?
                    """
                ) { bind in
                    bind(number); bind(now.rawValue); bind(now.rawValue); bind(id.rawValue)
                }
            }
            try connection.run("""
                INSERT OR REPLACE INTO attempts (job_id, number, started_at, range_start, started_over)
                VALUES (?, ?, ?, ?, ?)
                """
            ) { bind in
                bind(id.rawValue); bind(number); bind(now.rawValue); bind(rangeStart); bind(startedOver?.rawValue)
            }
        }
    }

    /// The bytes an attempt has received so far (with each checkpoint: a crash keeps the count).
    public func recordAttemptBytes(_ id: JobID, number: Int, bytes: Int64) throws {
        try connection.run("UPDATE attempts SET bytes = ? WHERE job_id = ? AND number = ?", bytes, id.rawValue, number)
    }

    /// Records attempt `number`'s end. `startedAt`: its start from byte 0, when that was not
    /// recorded (`beginAttempt`).
    public func finishAttempt(_ id: JobID, number: Int, httpStatus: Int?, error: JobError?, bytes: Int64,
                              metrics: AttemptMetrics? = nil, now: Timestamp = .now, startedAt: Timestamp? = nil) throws {
        let metricsJSON = try metrics?.storedJSON()
        // An attempt whose start was recorded with its end (`StateRecord.heldStart`), or one that
        // failed while it was being prepared (its file could not be opened: no descriptor left, a
        // missing upload source), has no row yet: it is made here (begun when it ended, for the
        // latter), so that `show` lists it too.
        try connection.run("""
            INSERT INTO attempts (job_id, number, started_at, ended_at, http_status, error_code, error_message, bytes, metrics)
            VALUES (?1, ?2, coalesce(?9, ?3), ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT (job_id, number) DO UPDATE SET ended_at = ?3, http_status = ?4, error_code = ?5,
                error_message = ?6, bytes = ?7, metrics = ?8
            """
        ) { bind in
            bind(id.rawValue); bind(number); bind(now.rawValue); bind(httpStatus); bind(error?.code); bind(error?.message)
            bind(bytes); bind(metricsJSON); bind(startedAt?.rawValue)
        }
    }

    /// Closes the attempts a stopped daemon left open, so `show` says what happened to them.
    public func closeInterruptedAttempts(now: Timestamp = .now) throws {
        try connection.run("""
            UPDATE attempts SET ended_at = ?, error_code = 'interrupted',
                   error_message = 'transferd stopped during this attempt'
            WHERE ended_at IS NULL
            """, now.rawValue)
    }

    public func attempts(_ id: JobID) throws -> [AttemptRecord] {
        try connection.query("""
            SELECT number, started_at, ended_at, range_start, http_status, error_code, error_message, bytes, metrics,
                   started_over, not_retried
            FROM attempts WHERE job_id = ? ORDER BY number
            """, [id.rawValue]) { row in
            let number = row.int()
            let startedAt = Timestamp(rawValue: row.int64())
            let endedAt = row.optionalInt64().map(Timestamp.init(rawValue:))
            let rangeStart = row.int64()
            let status = row.optionalInt()
            let code = row.optionalText()
            let message = row.optionalText()
            let bytes = row.int64()
            let metrics = row.optionalText().flatMap { try? JSONDecoder().decode(AttemptMetrics.self, from: Data($0.utf8)) }
            let startedOver = row.optionalText().flatMap(StartOverReason.init(rawValue:))
            var record = AttemptRecord(number: number, startedAt: startedAt, endedAt: endedAt, rangeStart: rangeStart,
                                       httpStatus: status, error: code.map { JobError(code: $0, message: message ?? "") },
                                       bytes: bytes, metrics: metrics, startedOver: startedOver)
            record.notRetried = row.optionalText().flatMap(RetryRefusal.init(rawValue:))
            return record
        }
    }

    /// Records why attempt `number` of a job was not tried again.
    public func recordRefusal(_ id: JobID, number: Int, _ refusal: RetryRefusal) throws {
        try connection.run("UPDATE attempts SET not_retried = ? WHERE job_id = ? AND number = ?",
                           refusal.rawValue, id.rawValue, number)
    }

    // MARK: Settings

    public func setting(_ key: String) throws -> String? {
        try connection.query("SELECT value FROM settings WHERE key = ?", [key]) { $0.text() }.first
    }

    /// Stores a setting; nil removes it.
    public func setSetting(_ key: String, _ value: String?) throws {
        if let value {
            try connection.run("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", key, value)
        } else {
            try connection.run("DELETE FROM settings WHERE key = ?", key)
        }
    }

    /// Records what `modify` changed (`JobChanges`) while the job is in a state that allows it;
    /// false when it is not (any more). `forgettingSession`: the job's server changed, so the
    /// upload session the old one holds (and its parts) is forgotten with it.
    public func modify(_ job: Job, forgettingSession: Bool = false, now: Timestamp = .now) throws -> Bool {
        let headers = try JobStore.json(job.headers)
        return try transaction {
            try connection.run("""
                UPDATE jobs SET url = ?, headers = ?, limit_rate = ?, priority = ?, max_retries = ?, updated_at = ?,
                                upload_session = CASE WHEN ? THEN NULL ELSE upload_session END
                WHERE id = ? AND state IN ('queued', 'paused', 'waiting', 'failed')
                """, job.url, headers, job.limit, job.priority.rawValue, job.maxRetries, now.rawValue, forgettingSession,
                job.id.rawValue)
            guard connection.changes > 0 else { return false }
            if forgettingSession { try connection.run("DELETE FROM upload_parts WHERE job_id = ?", job.id.rawValue) }
            return true
        }
    }

    public func setLimit(_ id: JobID, _ rate: Int64?) throws {
        try connection.run("UPDATE jobs SET limit_rate = ?, updated_at = ? WHERE id = ?", rate, Timestamp.now.rawValue, id.rawValue)
    }

    // MARK: Upload responses

    public func saveResponse(_ id: JobID, _ response: UploadResponse) throws {
        let headers = try JobStore.json(response.headers)
        try connection.run("INSERT OR REPLACE INTO upload_responses (job_id, status, headers, body, truncated) VALUES (?, ?, ?, ?, ?)",
                           id.rawValue, response.status, headers, SQLiteBlob(response.body), response.truncated)
    }

    public func response(_ id: JobID) throws -> UploadResponse? {
        try connection.query("SELECT status, headers, body, truncated FROM upload_responses WHERE job_id = ?",
                             [id.rawValue]) { row in
            let status = row.int()
            let headers = (try? JSONDecoder().decode([String].self, from: Data(row.text().utf8))) ?? []
            return UploadResponse(status: status, headers: headers, body: row.blob(), truncated: row.bool())
        }.first
    }

    // MARK: Resume data

    public func resumeState(_ id: JobID) throws -> ResumeState? {
        try connection.query("SELECT \(ResumeRow.columns) FROM resume_data WHERE job_id = ?", [id.rawValue]) { row in
            ResumeRow(&row).state
        }.first
    }

    /// Stores resume state and mirrors its byte counts into the job (one transaction when nested);
    /// `updatingProgress: false` leaves the job's row alone (a finishing file's mark: its
    /// completion writes the counts moments later, and a crash before that reads this state).
    public func saveResume(_ id: JobID, _ state: ResumeState, updatingProgress: Bool = true) throws {
        try upsertResume(id, state)
        guard updatingProgress else { return }
        try connection.run("UPDATE jobs SET bytes_done = ?, bytes_total = ?, updated_at = ? WHERE id = ?",
                           state.bytesDurable, state.bytesTotal, Timestamp.now.rawValue, id.rawValue)
    }

    private func upsertResume(_ id: JobID, _ state: ResumeState) throws {
        try connection.run("""
            INSERT INTO resume_data (job_id, partial_path, bytes_durable, etag, last_modified, bytes_total, finalizing,
                                     file_device, file_inode, file_size, file_mtime_ns, file_writing, decoded)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (job_id) DO UPDATE SET partial_path = excluded.partial_path,
                bytes_durable = excluded.bytes_durable, etag = excluded.etag,
                last_modified = excluded.last_modified, bytes_total = excluded.bytes_total,
                finalizing = excluded.finalizing, file_device = excluded.file_device,
                file_inode = excluded.file_inode, file_size = excluded.file_size,
                file_mtime_ns = excluded.file_mtime_ns, file_writing = excluded.file_writing,
                decoded = excluded.decoded
            """
        ) { bind in
            bind(id.rawValue); bind(state.partialPath); bind(state.bytesDurable); bind(state.validators.etag)
            bind(state.validators.lastModified); bind(state.bytesTotal); bind(state.finalizing)
            bind(state.file.map { Int64(bitPattern: $0.device) }); bind(state.file.map { Int64(bitPattern: $0.inode) })
            bind(state.file?.size); bind(state.file?.modifiedNanoseconds); bind(state.fileWriting); bind(state.decoded)
        }
    }

    public func deleteResume(_ id: JobID) throws {
        try connection.run("DELETE FROM resume_data WHERE job_id = ?", id.rawValue)
    }

    /// Runs several store calls as one transaction (inside one: as part of it).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try connection.transaction(body)
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try connection.query("PRAGMA integrity_check") { $0.text() }.joined(separator: "; ")
    }
}
