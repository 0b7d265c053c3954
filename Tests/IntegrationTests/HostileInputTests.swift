import Foundation
import XCTest

/// Random, truncated, oversized and deeply nested input on the control socket: every line
/// gets an error answer or a closed connection, and the daemon keeps serving.
final class HostileInputTests: IntegrationTestCase {
    func testRandomAndMalformedRequestsNeverStopTheDaemon() throws {
        var generator = SeededGenerator(seed: 0x7F4A_0C15_5EED)
        let valid = #"{"version":1,"command":"add","job":{"kind":"download","url":"http://127.0.0.1:1/x","path":"/tmp/x","headers":[],"overwrite":false,"priority":"normal","paused":true}}"#
        var payloads: [Data] = []
        for length in stride(from: 1, to: valid.utf8.count, by: 7) {
            payloads.append(Data(valid.utf8.prefix(length)) + [10])  // every truncation
        }
        for _ in 0..<100 {
            let count = Int.random(in: 1...4096, using: &generator)
            payloads.append(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }) + [10])
        }
        for depth in [64, 1024, 100_000] {
            payloads.append(Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "\n").utf8))
            payloads.append(Data((String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth) + "\n").utf8))
        }
        payloads.append(Data(repeating: UInt8(ascii: "x"), count: 3 << 20))  // over the line limit, no newline
        payloads.append(Data(#"{"version":1,"command":"show","ids":[-1,9223372036854775807]}"#.utf8 + [10]))
        payloads.append(Data(#"{"version":1,"command":"limit","down":-5}"#.utf8 + [10]))
        payloads.append(Data(#"{"version":1e999,"command":"stats"}"#.utf8 + [10]))

        for payload in payloads {
            let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 5)
            _ = connection.send(payload)
            switch connection.readReply() {
            case .line(let line):
                XCTAssertTrue(line.contains(#""ok":false"#), "an error answer, got: \(line.prefix(200))")
            case .closed:
                break
            case .timedOut:
                XCTFail("no answer to a \(payload.count)-byte payload starting \(payload.prefix(40).map { String($0) })")
            }
            connection.closeConnection()
        }
        XCTAssertTrue(daemon.isRunning, "the daemon survived \(payloads.count) hostile payloads")
        XCTAssertEqual(cli.run(["stats"]).exitCode, 0)
        XCTAssertTrue(try cli.jobs().isEmpty, "no hostile line created a job")
    }
}

/// A small repeatable random source (SplitMix64), so a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
