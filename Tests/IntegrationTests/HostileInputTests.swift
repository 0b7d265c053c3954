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

    /// A request is decoded once when it is one of this version; a line that is not is refused
    /// for its version first (a newer client's unknown command), then as a bad request.
    func testARefusalNamesTheVersionBeforeTheRequest() throws {
        let cases: [(line: String, code: String, words: String, id: Int?)] = [
            (#"{"version":2,"id":5,"command":"frobnicate"}"#, "unsupported_version", "protocol version 2 is not supported", 5),
            (#"{"version":2,"id":6,"command":"stats"}"#, "unsupported_version", "protocol version 2 is not supported", 6),
            (#"{"command":"stats"}"#, "unsupported_version", "protocol version missing is not supported", nil),
            (#"{"version":1,"id":7,"command":"frobnicate"}"#, "bad_request", "not a control request", 7),
            (#"not json"#, "bad_request", "not a control request", nil),
        ]
        for (line, code, words, id) in cases {
            let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 5)
            defer { connection.closeConnection() }
            _ = connection.send(Data((line + "\n").utf8))
            guard case .line(let answer) = connection.readReply() else { return XCTFail("no answer to \(line)") }
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])
            let error = try XCTUnwrap(object["error"] as? [String: Any], answer)
            XCTAssertEqual(object["ok"] as? Bool, false, answer)
            XCTAssertEqual(error["code"] as? String, code, answer)
            XCTAssertTrue((error["message"] as? String ?? "").contains(words), answer)
            XCTAssertEqual(object["id"] as? Int, id, answer)
        }
        let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 5)
        defer { connection.closeConnection() }
        _ = connection.send(Data((#"{"version":1,"id":8,"command":"stats"}"# + "\n").utf8))
        guard case .line(let answer) = connection.readReply() else { return XCTFail("no answer to stats") }
        XCTAssertTrue(answer.contains(#""ok":true"#) && answer.contains(#""id":8"#), answer)
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
