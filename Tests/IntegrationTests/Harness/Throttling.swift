import Foundation
import XCTest

extension IntegrationTestCase {
    /// Resumes paused jobs and returns the seconds until every one has completed.
    func secondsToComplete(resuming ids: [Int]) throws -> TimeInterval {
        let started = Date()
        XCTAssertEqual(cli.run(["resume"] + ids.map(String.init)).exitCode, 0)
        for id in ids { try waitCompleted(id) }
        return Date().timeIntervalSince(started)
    }

    /// `bytes` under a limit of `rate` bytes a second took `elapsed` seconds: no less than the
    /// time the limit allows, less 10% for the first piece that goes at once (firm: a limit can
    /// only slow a transfer down), and no more than twice it (loose: the machine is shared).
    func assertLimited(_ elapsed: TimeInterval, bytes: Int, rate: Int, _ what: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        let allowed = Double(bytes) / Double(rate)
        XCTAssertGreaterThan(elapsed, allowed * 0.9, "\(what) arrived in \(elapsed) s", file: file, line: line)
        XCTAssertLessThan(elapsed, allowed * 2, "\(what) took \(elapsed) s", file: file, line: line)
    }
}
