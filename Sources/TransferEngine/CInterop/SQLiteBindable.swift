import CTransferSupport
import Glibc

/// Swift values that bind as SQLite parameters, each itself: a statement run with them
/// (`SQLiteConnection.run`, a parameter pack) builds no intermediate value and boxes nothing.
protocol SQLiteBindable {
    /// Binds the value to parameter `index` (1-based) of `statement`; SQLite's result code.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
}

/// SQLite copies what it is given (`SQLITE_TRANSIENT`, which Swift cannot import as a macro).
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Bytes bound as a BLOB.
struct SQLiteBlob: SQLiteBindable {
    var bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                                  Int32($0.count), sqliteTransient) }
    }
}

extension Int64: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension Int: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Bool: SQLiteBindable {
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self ? 1 : 0) }
}

extension String: SQLiteBindable {
    /// Binds SQLite's copy of the text, read in place, up to its first NUL: where it ended when
    /// it was passed as a C string.
    @inline(__always)
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        var text = self
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, sqliteTransient) }
            let length = memchr(base, 0, bytes.count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? bytes.count
            return sqlite3_bind_text64(statement, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                       sqlite3_uint64(length), sqliteTransient, UInt8(SQLITE_UTF8))
        }
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    @inline(__always)
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        guard let self else { return sqlite3_bind_null(statement, index) }
        return self.bind(to: statement, at: index)
    }
}

/// Binds a statement's values one call at a time, each through an overload for its own type:
/// the calls are resolved where they are written, where `SQLiteConnection.run`'s parameter pack
/// goes through each value's protocol witness and copies an `Optional` through its metadata
/// (~750 instructions a value with SQLite's own bind, ~300 this way). For the statements with
/// many values that run for every job (docs/design.md).
struct SQLiteBinder {
    private let statement: OpaquePointer
    /// The parameter the last value went to (1-based).
    private(set) var count: Int32 = 0
    /// The first result code that was not `SQLITE_OK`.
    private(set) var failure = SQLITE_OK

    init(_ statement: OpaquePointer) {
        self.statement = statement
    }

    mutating func callAsFunction(_ value: Int64?) {
        count += 1
        record(value.map { sqlite3_bind_int64(statement, count, $0) } ?? sqlite3_bind_null(statement, count))
    }

    mutating func callAsFunction(_ value: Int?) {
        callAsFunction(value.map(Int64.init))
    }

    mutating func callAsFunction(_ value: Bool) {
        callAsFunction(Int64(value ? 1 : 0))
    }

    mutating func callAsFunction(_ value: String?) {
        count += 1
        record(value?.bind(to: statement, at: count) ?? sqlite3_bind_null(statement, count))
    }

    private mutating func record(_ code: Int32) {
        if code != SQLITE_OK, failure == SQLITE_OK { failure = code }
    }
}
