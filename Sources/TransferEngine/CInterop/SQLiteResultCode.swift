import CTransferSupport

/// An SQLite result code (extended codes on). Match on codes, never on message text.
public struct SQLiteResultCode: RawRepresentable, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    public static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    public static let done = SQLiteResultCode(rawValue: SQLITE_DONE)
    /// A row a UNIQUE index already holds (`SQLITE_CONSTRAINT_UNIQUE`, a macro Swift does not import).
    public static let constraintUnique = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | 8 << 8)

    public var description: String { String(cString: sqlite3_errstr(rawValue)) }
}

/// A failed SQLite call, with the statement that failed.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public var code: SQLiteResultCode
    public var message: String
    public var sql: String?

    public var description: String {
        if let sql { return "SQLite error \(code.rawValue) (\(message)) in: \(sql)" }
        return "SQLite error \(code.rawValue) (\(message))"
    }
}
