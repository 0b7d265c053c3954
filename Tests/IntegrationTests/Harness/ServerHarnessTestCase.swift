import Foundation
import XCTest

/// A test of one of the harness's servers alone, driven by the real curl (no transferd): a
/// fresh work directory (kept when a test fails, with the tail of the server's log printed),
/// a command runner, and random source files.
class ServerHarnessTestCase: XCTestCase {
    private(set) var workDir: URL!
    private(set) var runner: CommandRunner!

    /// The work directory's name prefix.
    class var workPrefix: String { "tdserver" }
    /// What a failure prints: the server's name and its log (subclasses).
    var serverLog: (name: String, text: String)? { nil }

    override func setUpWithError() throws {
        try super.setUpWithError()
        workDir = try TempDirectory.make(prefix: Self.workPrefix)
        runner = try CommandRunner(scratch: workDir.appendingPathComponent("curl"))
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0 {
            let log = serverLog
            print("---- \(name): kept \(workDir.path); \(log?.name ?? "server") log (tail):\n"
                + (log?.text.split(separator: "\n").suffix(60).joined(separator: "\n") ?? "") + "\n----")
        } else if let workDir {
            try? FileManager.default.removeItem(at: workDir)
        }
        try super.tearDownWithError()
    }

    func source(_ name: String, size: Int) throws -> URL {
        let url = workDir.appendingPathComponent(name)
        try Files.randomData(count: size).write(to: url)
        return url
    }
}
