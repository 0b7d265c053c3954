import Testing
@testable import TransferEngine

/// What `run` (a parameter pack, or a `SQLiteBinder`) stores, against what `query` (an array of
/// `any SQLiteBindable`) stores for the same values: the same rows, read back by SQLite.
@Suite struct SQLiteBindingTests {
    let directory = TemporaryDirectory()

    private func connection() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: directory.database("b.db"))
        try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, v)")
        return connection
    }

    /// The stored value of row `n`: its type and its text as SQLite renders it.
    private func stored(_ connection: SQLiteConnection, _ n: Int) throws -> String? {
        try connection.query("SELECT typeof(v) || ':' || coalesce(hex(v), '') FROM t WHERE n = ?", [n]) { $0.text() }.first
    }

    @Test func eachTypeBindsAlikeInAPackAndInAnArray() throws {
        let connection = try connection()
        let text: String? = "dé/jà vu, a string longer than a small one fits"
        let none: String? = nil
        try connection.run("INSERT INTO t VALUES (?, ?)", 1, Int64.min)
        try connection.run("INSERT INTO t VALUES (?, ?)", 2, true)
        try connection.run("INSERT INTO t VALUES (?, ?)", 3, text)
        try connection.run("INSERT INTO t VALUES (?, ?)", 4, none)
        try connection.run("INSERT INTO t VALUES (?, ?)", 5, Int?.some(42))
        try connection.run("INSERT INTO t VALUES (?, ?)", 6, "")
        try connection.run("INSERT INTO t VALUES (?, ?)", 7, "short")
        let boxed: [(Int, any SQLiteBindable)] = [(11, Int64.min), (12, true), (13, text), (14, none), (15, Int?.some(42)),
                                                  (16, ""), (17, "short")]
        for (n, value) in boxed {
            _ = try connection.query("INSERT INTO t VALUES (?, ?)", [n, value]) { _ in () }
        }
        for n in 1...7 {
            let packed = try stored(connection, n)
            #expect(packed != nil)
            #expect(packed == (try stored(connection, n + 10)), "row \(n)")
        }
        #expect(try stored(connection, 6) == "text:")  // empty text, not NULL
        #expect(try stored(connection, 4) == "null:")
    }

    /// The values a `SQLiteBinder` binds one call at a time are stored as the pack stores them;
    /// a value beyond the statement's parameters is refused before the statement runs.
    @Test func aBinderBindsAsThePackDoes() throws {
        let connection = try connection()
        let text: String? = "dé/jà vu, a string longer than a small one fits"
        try connection.run("INSERT INTO t VALUES (?, ?)") { $0(21); $0(Int64.min) }
        try connection.run("INSERT INTO t VALUES (?, ?)") { $0(22); $0(true) }
        try connection.run("INSERT INTO t VALUES (?, ?)") { $0(23); $0(text) }
        try connection.run("INSERT INTO t VALUES (?, ?)") { $0(24); $0(String?.none) }
        try connection.run("INSERT INTO t VALUES (?, ?)") { $0(25); $0(Int?.some(42)) }
        try connection.run("INSERT INTO t VALUES (?, ?)") { $0(26); $0("") }
        try connection.run("INSERT INTO t VALUES (?, ?)", 1, Int64.min)
        try connection.run("INSERT INTO t VALUES (?, ?)", 2, true)
        try connection.run("INSERT INTO t VALUES (?, ?)", 3, text)
        try connection.run("INSERT INTO t VALUES (?, ?)", 4, String?.none)
        try connection.run("INSERT INTO t VALUES (?, ?)", 5, Int?.some(42))
        try connection.run("INSERT INTO t VALUES (?, ?)", 6, "")
        for n in 1...6 {
            #expect(try stored(connection, n + 20) == (try stored(connection, n)), "row \(n)")
        }
        #expect(try stored(connection, 24) == "null:")
        #expect(throws: SQLiteError.self) { try connection.run("INSERT INTO t VALUES (?, ?)") { $0(31); $0(1); $0(2) } }
        #expect(try stored(connection, 31) == nil)
    }

    /// A String with a NUL is bound up to it, as it was when strings were passed as C strings.
    @Test func textEndsAtItsFirstNUL() throws {
        let connection = try connection()
        try connection.run("INSERT INTO t VALUES (?, ?)", 1, "ab\u{0}cd")
        #expect(try stored(connection, 1) == "text:6162")
    }
}
