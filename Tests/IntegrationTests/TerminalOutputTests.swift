import Foundation
import XCTest

/// What servers and file names hold never reaches the terminal raw: an upload answered with
/// escape sequences in its body and headers, a download whose ETag (and so a message) holds
/// ESC, a destination with a line break and ESC in its name. The human output of `show`,
/// `list`, `events`, `watch`, `show --curl` and error messages holds no control character
/// (each shown escaped, `\x1b`, `\n`), while `--json` keeps the exact strings.
final class TerminalOutputTests: FaultServerTestCase {
    /// The output holds nothing a terminal would obey: no C0 control but the line feeds that
    /// end lines, no DEL, no C1 control, no bidi override, and only valid UTF-8.
    private func assertNothingRaw(_ result: CommandResult, _ what: String, stderr: Bool = false,
                                  file: StaticString = #filePath, line: UInt = #line) {
        let bytes = stderr ? result.stderrBytes : result.stdoutBytes
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return XCTFail("\(what): not UTF-8 (a raw byte reached the terminal): \(bytes)", file: file, line: line)
        }
        let raw = text.unicodeScalars.filter { scalar in
            (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
        XCTAssertEqual(raw.map(\.value), [], "\(what) holds raw control characters:\n\(text.debugDescription)",
                       file: file, line: line)
    }

    func testAnUploadsHostileAnswerIsShownEscapedAndKeptExactInJSON() throws {
        let source = workDir.appendingPathComponent("payload.txt")
        try Data("payload\n".utf8).write(to: source)
        let result = cli.run(["upload", faults.baseURL + "/upload/x?hostile=1", "-T", source.path])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let id = try XCTUnwrap(Int(result.trimmedStdout), result.summary)
        try waitCompleted(id)

        let shown = cli.run(["show", String(id)])
        XCTAssertEqual(shown.exitCode, 0, shown.summary)
        assertNothingRaw(shown, "show")
        for escaped in [#"ETag: "\x1b[5mblink\x07""#, #"{"id": "\x1b[31mred\x1b[0m"}"#, #"\x1b]0;pwned\x07\x1b[2J\rover\x7f"#,
                        #"\u009b2J \u202eevil "#, #"X-Note: \x1b]8;;http://evil/\x1b\link\x1b]8;;\x1b\ "#] {
            XCTAssertTrue(shown.stdout.contains(escaped), "show holds \(escaped):\n\(shown.stdout)")
        }

        let response = try XCTUnwrap(try cli.job(id)["response"] as? [String: Any])
        let headers = response["headers"] as? [String] ?? []
        XCTAssertTrue(headers.contains("ETag: \"\u{1B}[5mblink\u{07}\""), "--json keeps the ETag exactly: \(headers)")
        let body = try XCTUnwrap(response["body"] as? String)
        XCTAssertTrue(body.hasPrefix("{\"id\": \"\u{1B}[31mred\u{1B}[0m\"}\r\n\u{1B}]0;pwned\u{07}\u{1B}[2J\rover\u{7F}\n\u{9B}2J \u{202E}evil "),
                      "--json keeps the body exactly: \(body.debugDescription)")
    }

    func testANameWithALineBreakAndAnETagWithEscapesAreShownEscapedEverywhere() throws {
        // The ETag is the name's: "ev<ESC>[31mil-v1". The first GET is cut off after 256 KiB;
        // the second gets a 206 of version 2 with another ETag although If-Range names
        // version 1, so the job starts over, saying which ETags differ.
        let name = "ev\u{1B}[31mil"
        let size = 1 * MiB
        let url = faults.baseURL + "/files/ev%1B%5B31mil?size=\(size)&drop=\(256 * KiB)&times=1&change_after=1&ignore_if_range=1"
        let destination = downloads.appendingPathComponent("new\nline \u{1B}[2J\u{07}.bin")
        let id = try cli.download(url, to: destination, ["--retry", "3"])
        try waitCompleted(id)
        XCTAssertEqual(try Data(contentsOf: destination).count, size)
        faults.awaitGets(name, count: 3)

        let listed = cli.run(["list"])
        XCTAssertEqual(listed.exitCode, 0, listed.summary)
        assertNothingRaw(listed, "list")
        XCTAssertEqual(listed.trimmedStdout.split(separator: "\n").count, 2, "a header and one row:\n\(listed.stdout)")
        XCTAssertTrue(listed.stdout.contains(#"/new\nline \x1b[2J\x07.bin"#), listed.stdout)
        XCTAssertEqual(try cli.jobs().first?["path"] as? String, destination.path, "list --json keeps the path exactly")

        let etagMessage = "the ETag changed from \"\(name)-v1\" to \"\(name)-v2\""
        let shown = cli.run(["show", String(id)])
        assertNothingRaw(shown, "show")
        XCTAssertTrue(shown.stdout.contains(#"the ETag changed from "ev\x1b[31mil-v1" to "ev\x1b[31mil-v2""#), shown.stdout)
        XCTAssertTrue(shown.stdout.contains(#"path:      "# + downloads.path + #"/new\nline \x1b[2J\x07.bin"#), shown.stdout)
        let attempts = try cli.job(id).attemptLog
        XCTAssertTrue(attempts.contains { ($0["error"] as? [String: Any])?["message"] as? String == "the source changed: " + etagMessage },
                      "show --json keeps the message exactly: \(attempts)")

        let events = cli.run(["events"])
        assertNothingRaw(events, "events")
        XCTAssertTrue(events.stdout.contains(#"(starting over: the ETag changed from "ev\x1b[31mil-v1""#), events.stdout)
        let jsonEvents = cli.run(["--json", "events"])
        let reasons = jsonEvents.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.compactMap { $0["reason"] as? String }
        XCTAssertTrue(reasons.contains("starting over: " + etagMessage), "events --json keeps the reason exactly: \(reasons)")

        let watched = cli.run(["watch", String(id)])
        XCTAssertEqual(watched.exitCode, 0, watched.summary)
        assertNothingRaw(watched, "watch")

        // show --curl: no raw control either, and the shell reads the quoted path back exactly.
        let curl = cli.run(["show", String(id), "--curl"])
        assertNothingRaw(curl, "show --curl")
        let line = curl.trimmedStdout
        let start = try XCTUnwrap(line.firstRange(of: " --output "), line).upperBound
        let end = try XCTUnwrap(line.range(of: " 'http", options: .backwards), line).lowerBound
        let quoted = line[start..<end]
        let echoed = cli.runner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "printf %s \(quoted)"], timeout: 10)
        XCTAssertEqual(echoed.stdout, downloads.path + "/.new\nline \u{1B}[2J\u{07}.bin.transferd-part", echoed.summary)

        // The daemon's log (a terminal may follow it) says the same, escaped.
        let log = try Data(contentsOf: daemon.logURL)
        XCTAssertFalse(log.contains(0x1B) || log.contains(0x07), "a raw control character in the daemon's log")
        XCTAssertTrue(String(decoding: log, as: UTF8.self).contains(#"the ETag changed from "ev\x1b[31mil-v1""#))

        // A message of the daemon naming the file: one line on stderr, escaped.
        let again = cli.run(["download", url, "-o", destination.path])
        XCTAssertEqual(again.exitCode, 2, again.summary)
        assertNothingRaw(again, "the error message", stderr: true)
        assertOneLineMessage(again.stderr, "an existing destination")
        XCTAssertTrue(again.stderr.contains(#"new\nline \x1b[2J\x07.bin already exists"#), again.stderr)
    }
}
