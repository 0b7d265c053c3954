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
