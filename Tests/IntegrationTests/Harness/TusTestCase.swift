import Foundation
import XCTest

/// An `IntegrationTestCase` with a tuspyserver (`tus`) running beside nginx.
class TusTestCase: IntegrationTestCase {
    private(set) var tus: TusServer!

    override func prepareDaemonEnvironment() throws -> [String: String] {
        tus = try TusServer(directory: workDir.appendingPathComponent("tus"))
        try tus.start()
        return [:]
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0, let tus {
            print("---- \(name): tus server log (tail):\n\(tus.log().split(separator: "\n").suffix(60).joined(separator: "\n"))\n----")
        }
        tus?.stop()
        try super.tearDownWithError()
    }
}
