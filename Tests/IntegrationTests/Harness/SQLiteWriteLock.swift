import Foundation

/// Another writer on the daemon's database: `sqlite3` holding `BEGIN IMMEDIATE` until released,
/// so that the daemon's store waits (its busy timeout is 5 s).
final class SQLiteWriteLock {
    private let process = Process()
    private let input = Pipe()
    private var released = false

    /// Returns once another writer is refused at once.
    init(database: String, runner: CommandRunner) throws {
        let sqlite = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.executableURL = sqlite
        process.arguments = [database]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Waiting its turn if the daemon is writing at that moment.
        input.fileHandleForWriting.write(Data(".timeout 5000\nBEGIN IMMEDIATE;\n".utf8))
        var last = ""
        let held = poll(timeout: 5) {
            let probe = runner.run(sqlite, [database, "BEGIN IMMEDIATE; ROLLBACK;"], timeout: 5)
            last = probe.summary
            return probe.exitCode != 0 && probe.stderr.contains("locked")
        }
        guard held else {
            release()
            throw HarnessError("sqlite3 did not take the write lock on \(database); last probe: \(last)")
        }
    }

    func release() {
        guard !released else { return }
        released = true
        input.fileHandleForWriting.write(Data("COMMIT;\n.quit\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
