import Foundation
import XCTest

/// An `IntegrationTestCase` with the fault-injecting server (`fault_server.py`) running beside
/// nginx; on failure its request log is printed with the rest.
class FaultServerTestCase: IntegrationTestCase {
    private(set) var faults: FaultServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        faults = try FaultServer(outputURL: workDir.appendingPathComponent("fault_server.out"),
                                 scratch: workDir.appendingPathComponent("fault-curl"))
        try faults.start()
    }

    override func tearDownWithError() throws {
        if let run = testRun, run.totalFailureCount > 0, let faults {
            print("---- \(name): fault server requests:\n\(faults.describeLog())\n----")
        }
        faults?.stop()
        try super.tearDownWithError()
    }
}
