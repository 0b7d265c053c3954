import CTransferSupport

/// One SQLite connection; closed in deinit. Thread: one thread at a time (the store's queue).
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [StatementKey: SQLiteStatement] = [:]
    private var depth = 0

    /// SQLite's process-wide settings, made once before the first connection opens it.
    /// Memory statistics off: with them each of SQLite's mallocs and frees (a dozen per
    /// statement: this build has no lookaside memory) took a process-wide mutex.
    private static let configured: Void = { _ = tds_sqlite_disable_memstatus() }()

    init(path: String) throws(SQLiteError) {
        Self.configured
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(connection)
            throw SQLiteError(code: SQLiteResultCode(rawValue: code), message: message, sql: nil)
        }
        handle = connection
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "failed"
            sqlite3_free(message)
            throw SQLiteError(code: SQLiteResultCode(rawValue: code), message: text, sql: sql)
        }
    }

    /// Runs a statement with parameters, discarding any rows.
    func run<each Value: SQLiteBindable>(_ sql: String, _ values: repeat each Value) throws(SQLiteError) {
        let statement = try prepared(sql)
        try statement.bind(repeat each values)
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// `run` for a statement whose values `values` binds one call at a time (`SQLiteBinder`).
    func run(_ sql: String, binding values: (inout SQLiteBinder) -> Void) throws(SQLiteError) {
        let statement = try prepared(sql)
        try statement.bind(values)
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ values: [any SQLiteBindable] = [], _ map: (inout SQLiteRow) throws -> T) throws -> [T] {
        let statement = try prepared(sql)
        try statement.bind(values)
        var results: [T] = []
        try statement.forEachRow { row in results.append(try map(&row)) }
        return results
    }

    /// Runs `body` inside `BEGIN IMMEDIATE ... COMMIT`, rolling back if it throws. Inside a
    /// transaction it is part of that one, so store methods compose: a failure unwinds to
    /// whoever began it, which undoes all of it.
    /// There are no savepoints: SQLite copies every page a savepoint's work changes into the
    /// statement journal, once for each savepoint open (one per nested store call wrote 45 MB of
    /// temporary file for a 2,000-job manifest, 11,000 pages), and a group commit undoes a failed
    /// piece by rolling the whole group back (`StoreQueue`).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        guard depth == 0 else { return try body() }
        // Prepared once and cached (`run`), not parsed again by `execute`.
        try run("BEGIN IMMEDIATE")
        depth += 1
        defer { depth -= 1 }
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Whether a transaction of `transaction` is open.
    var inTransaction: Bool { depth > 0 }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows the last INSERT, UPDATE or DELETE changed itself (not those of its cascades).
    var changes: Int { Int(sqlite3_changes(handle)) }

    private func prepared(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        let key = StatementKey(sql: sql)
        if let statement = statements[key] { return statement }
        let statement = try SQLiteStatement(connection: handle, sql: sql)
        statements[key] = statement
        return statement
    }
}

/// A statement's text as the key of the cache of prepared statements, hashed by its length and
/// its first and last 32 bytes. A String hashes all of its bytes: up to 700 of them for the
/// statements a small download runs, ~1,300 instructions at each of the 14 runs per file —
/// 20,000 instructions per file (`bench/instructions.sh`). Two statements alike at both ends
/// and in length still differ by `==`, which compares them whole.
private struct StatementKey: Hashable {
    let sql: String

    static func == (lhs: StatementKey, rhs: StatementKey) -> Bool { lhs.sql == rhs.sql }

    func hash(into hasher: inout Hasher) {
        let hashedEnds: Void? = sql.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(32))))
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(32))))
        }
        if hashedEnds == nil { hasher.combine(sql) }
    }
}
