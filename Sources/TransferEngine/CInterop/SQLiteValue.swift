import CTransferSupport
import Glibc

/// A value bound to a statement parameter.
enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .null: sqlite3_bind_null(statement, index)
        case .integer(let value): value.bind(to: statement, at: index)
        case .text(let value): value.bind(to: statement, at: index)
        case .blob(let bytes):
            bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                                      Int32($0.count), Self.transient) }
        }
    }
}

/// Swift values that bind as SQLite parameters.
protocol SQLiteBindable {
    var sqliteValue: SQLiteValue { get }
    /// Binds the value to parameter `index` (1-based) of `statement`; SQLite's result code.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

// The common types bind themselves: a statement run with them (`SQLiteConnection.run`, a
// parameter pack) builds no `SQLiteValue` and boxes nothing.

extension Int64: SQLiteBindable {
    var sqliteValue: SQLiteValue { .integer(self) }
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension Int: SQLiteBindable {
    var sqliteValue: SQLiteValue { .integer(Int64(self)) }
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Bool: SQLiteBindable {
    var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self ? 1 : 0) }
}

extension String: SQLiteBindable {
    var sqliteValue: SQLiteValue { .text(self) }
    /// Binds SQLite's copy of the text, read in place, up to its first NUL: where it ended when
    /// it was passed as a C string.
    @inline(__always)
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = self
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, SQLiteValue.transient) }
            let length = memchr(base, 0, bytes.count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? bytes.count
            return sqlite3_bind_text64(statement, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                       sqlite3_uint64(length), SQLiteValue.transient, UInt8(SQLITE_UTF8))
        }
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
    @inline(__always)
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        guard let self else { return sqlite3_bind_null(statement, index) }
        return self.bind(to: statement, at: index)
    }
}

extension SQLiteValue: SQLiteBindable {
    var sqliteValue: SQLiteValue { self }
}
