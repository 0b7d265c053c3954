import Foundation
import XCTest

/// An `IntegrationTestCase` with a tus server of the subclass's `implementation` running beside
/// nginx; on failure its log is printed with the rest.
class TusInteropTestCase: IntegrationTestCase {
    /// The server the subclass's tests run against.
    class var implementation: TusImplementation { .tuspyserver }
    private(set) var tus: (any TusServing)!

    override func prepareDaemonEnvironment() throws -> [String: String] {
        tus = try Self.implementation.makeServer(directory: workDir.appendingPathComponent("tus"))
        try tus.start(samePort: false)
        return [:]
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0, let tus {
            print("---- \(name): \(Self.implementation.rawValue) log (tail):\n"
                + tus.log().split(separator: "\n").suffix(60).joined(separator: "\n") + "\n----")
        }
        tus?.stop()
        try super.tearDownWithError()
    }
}
