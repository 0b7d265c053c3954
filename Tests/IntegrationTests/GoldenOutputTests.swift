import Foundation
import XCTest

/// The help texts and the human output of the commands, compared with stored text in
/// Golden/. After an intended change, regenerate with `UPDATE_GOLDEN=1 swift test --filter GoldenOutputTests`
/// and review the diff.
final class GoldenOutputTests: IntegrationTestCase {
    /// Output that depends on the date comes from a clock the test sets: a Saturday noon in UTC,
    /// so the timetable below has an entry in force whatever day the tests run.
    override class var daemonArguments: [String] { ["--test-clock", "2026-11-28T12:00:00Z"] }
    override class var daemonEnvironment: [String: String] { ["TZ": "UTC"] }

    static let commands = ["download", "upload", "list", "show", "pause", "resume", "cancel", "retry", "wait",
                           "resume-data", "stats", "modify", "limit", "events", "watch", "batch", "backup", "prune",
                           "completion"]

    func testHelpTexts() throws {
        try compare(cli.run(["--help"]), golden: "help")
        for command in Self.commands {
            try compare(cli.run([command, "--help"]), golden: "\(command).help")
        }
    }

    func testHumanOutputOfJobCommands() throws {
        try makeSource("golden.bin", size: 300 * KiB)
        let dest = destination("golden.bin")
        let id = try cli.download(nginx.url(.files, "golden.bin"), to: dest, ["--paused", "--limit-rate", "1M", "-H", "Authorization: Bearer x"])
        try compare(cli.run(["list"]), golden: "list")
        try compare(cli.run(["show", String(id)]), golden: "show-paused")
        try compare(cli.run(["limit", String(id), "512K"]), golden: "limit-job")
        try compare(cli.run(["limit", "--down", "4M", "--schedule", "Sat,Sun down=1M"]), golden: "limit-global")
        try compare(cli.run(["pause", String(id)]), golden: "pause-paused")
        try compare(cli.run(["resume", String(id)]), golden: "resume")
        try waitCompleted(id)
        try compare(cli.run(["wait", String(id)]), golden: "wait-completed")
    }

    /// Replaces what changes from run to run: temp paths, times, ports, pids.
    private func normalized(_ text: String) -> String {
        var text = text.replacingOccurrences(of: workDir.path, with: "$WORK")
        text = text.replacingOccurrences(of: ":\(nginx.port)/", with: ":$PORT/")
        for pattern in [#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#, #"pid \d+"#] {
            text = text.replacingOccurrences(of: pattern, with: pattern.hasPrefix("pid") ? "pid $PID" : "$TIME",
                                             options: .regularExpression)
        }
        return text
    }

    private func compare(_ result: CommandResult, golden name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let actual = "exit \(result.exitCode)\n--- stdout\n\(normalized(result.stdout))--- stderr\n\(normalized(result.stderr))"
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Golden").appendingPathComponent(name + ".txt")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try actual.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(actual, expected, "output of \(name) changed (UPDATE_GOLDEN=1 regenerates Golden/)", file: file, line: line)
    }
}
