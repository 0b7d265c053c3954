import Foundation
import XCTest

/// An `IntegrationTestCase` with a moto S3 server (`s3`) started before the daemon, whose
/// credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`) reach the daemon
/// alone: never the test process's environment, the CLI or other children. On failure the
/// server's log is printed with the rest.
class S3TestCase: IntegrationTestCase {
    private(set) var s3: S3Server!

    override func prepareDaemonEnvironment() throws -> [String: String] {
        s3 = try S3Server(directory: workDir.appendingPathComponent("s3"))
        try s3.start()
        return s3.environment
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0, let s3 {
            print("---- \(name): moto log (tail):\n\(s3.log().split(separator: "\n").suffix(60).joined(separator: "\n"))\n----")
        }
        s3?.stop()
        try super.tearDownWithError()
    }
}
