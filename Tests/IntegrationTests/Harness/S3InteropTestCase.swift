import Foundation
import XCTest

/// An `IntegrationTestCase` with an S3 server of the subclass's `implementation` started before the
/// daemon, whose key reaches the daemon's environment alone (as S3TestCase does for moto). On
/// failure the server's log (and its relay's) is printed with the rest.
class S3InteropTestCase: IntegrationTestCase {
    /// The server the subclass's tests run against.
    class var implementation: S3Implementation { .moto }
    private(set) var s3: (any S3Serving)!

    override func prepareDaemonEnvironment() throws -> [String: String] {
        s3 = try Self.implementation.makeServer(directory: workDir.appendingPathComponent("s3"))
        try s3.start()
        return s3.environment
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0, let s3 {
            print("---- \(name): \(Self.implementation.rawValue) log (tail):\n"
                + s3.log().split(separator: "\n").suffix(60).joined(separator: "\n") + "\n----")
        }
        s3?.stop()
        try super.tearDownWithError()
    }
}
