import CTransferSupport

/// A prepared statement; finalized in deinit. Thread: its connection's.
final class SQLiteStatement {
    private let handle: OpaquePointer
    let sql: String

    init(connection: OpaquePointer, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError(code: SQLiteResultCode(rawValue: code),
                              message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        handle = statement
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to parameters 1...n (each as it is read: no array
    /// of converted values in between).
    func bind(_ values: [any SQLiteBindable]) throws(SQLiteError) {
        reset(binding: values.count)
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    /// `bind` for a statement's values as they were written at the call (a parameter pack): each
    /// binds itself, with neither an array nor a box per value. (The loop is not specialized
    /// value by value even so: each still goes through its protocol witness.)
    func bind<each Value: SQLiteBindable>(_ values: repeat each Value) throws(SQLiteError) {
        var count = 0
        for _ in repeat each values { count += 1 }
        reset(binding: count)
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            let code = value.bind(to: handle, at: index)
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    /// `bind` for values given one call at a time (`SQLiteBinder`); `values` must give one for
    /// each parameter.
    func bind(_ values: (inout SQLiteBinder) -> Void) throws(SQLiteError) {
        sqlite3_reset(handle)
        var binder = SQLiteBinder(handle)
        values(&binder)
        guard binder.failure == SQLITE_OK else { throw error(binder.failure) }
        precondition(binder.count == sqlite3_bind_parameter_count(handle), "a value for each parameter of \(sql)")
    }

    /// Resets the statement for a run that binds `count` values; bindings left from the last run
    /// matter only where this one binds fewer.
    private func reset(binding count: Int) {
        sqlite3_reset(handle)
        if count < sqlite3_bind_parameter_count(handle) { sqlite3_clear_bindings(handle) }
    }

    /// Advances to the next row; false when done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(code)
        }
    }

    func reset() { sqlite3_reset(handle) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    /// True when the column holds an integer or NULL: text, a real or a blob would read as 0 or
    /// a clamped number.
    func holdsInteger(_ column: Int32) -> Bool {
        let type = sqlite3_column_type(handle, column)
        return type == SQLITE_INTEGER || type == SQLITE_NULL
    }

    func text(_ column: Int32) -> String { optionalText(column) ?? "" }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func optionalText(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: pointer)
    }

    private func error(_ code: Int32) -> SQLiteError {
        let connection = sqlite3_db_handle(handle)
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "unknown"
        return SQLiteError(code: SQLiteResultCode(rawValue: code), message: message, sql: sql)
    }
}

/// A row being read; valid only inside the closure it is passed to.
struct SQLiteRow {
    /// A column meant to hold an integer holds text, a real or a blob (shown as text).
    struct NotAnInteger: Error {
        var text: String
    }

    fileprivate let statement: SQLiteStatement
    private var column: Int32 = 0

    fileprivate init(statement: SQLiteStatement) { self.statement = statement }

    /// The next column, read in SELECT order.
    mutating func int64() -> Int64 { defer { column += 1 }; return statement.int64(column) }
    mutating func int() -> Int { Int(int64()) }
    mutating func optionalInt64() -> Int64? { defer { column += 1 }; return statement.optionalInt64(column) }
    mutating func optionalInt() -> Int? { optionalInt64().map(Int.init) }
    /// The next column when it holds an integer or NULL; `.failure` with its text otherwise.
    mutating func storedInteger() -> Result<Int64?, NotAnInteger> {
        guard statement.holdsInteger(column) else {
            defer { column += 1 }
            return .failure(NotAnInteger(text: statement.text(column)))
        }
        return .success(optionalInt64())
    }
    mutating func text() -> String { defer { column += 1 }; return statement.text(column) }
    mutating func optionalText() -> String? { defer { column += 1 }; return statement.optionalText(column) }
    mutating func bool() -> Bool { int64() != 0 }
    mutating func blob() -> [UInt8] { defer { column += 1 }; return statement.blob(column) }
}

extension SQLiteStatement {
    func forEachRow(_ body: (inout SQLiteRow) throws -> Void) throws {
        defer { reset() }
        while try step() {
            var row = SQLiteRow(statement: self)
            try body(&row)
        }
    }
}
