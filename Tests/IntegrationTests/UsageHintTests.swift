import Foundation
import XCTest

/// Habits from curl, wget and git: `--version` on both programs without a daemon, and a
/// mistyped command or option answered with the closest one (exit 2 as before).
final class UsageHintTests: IntegrationTestCase {
    func testVersionNeedsNoDaemonAndIsOneLine() throws {
        let nowhere = workDir.appendingPathComponent("no-daemon-here").path
        let ctl = cli.runner.run(binaries.transferctl, ["--state-dir", nowhere, "--version"], timeout: 10)
        XCTAssertEqual(ctl.exitCode, 0, ctl.summary)
        XCTAssertEqual(ctl.stderr, "", ctl.summary)
        let daemonVersion = cli.runner.run(binaries.transferd, ["--version"], timeout: 10)
        XCTAssertEqual(daemonVersion.exitCode, 0, daemonVersion.summary)
        let version = try XCTUnwrap(daemonVersion.stdout.split(separator: " ").last.map(String.init), daemonVersion.summary)
        XCTAssertTrue(daemonVersion.stdout.hasPrefix("transferd ") && version.hasSuffix("\n"), daemonVersion.summary)
        XCTAssertEqual(ctl.stdout, "transferctl " + version, "the same version, one line")
        XCTAssertEqual(try XCTUnwrap(cli.json(["stats"]) as? [String: Any])["version"] as? String,
                       version.trimmingCharacters(in: .newlines), "and the daemon's stats say it too")
    }

    func testAMistypedCommandOrOptionNamesTheClosestOne() {
        let hints: [([String], String)] = [
            (["dowload"], "unknown command 'dowload'; did you mean 'download'? (see transferctl --help)"),
            (["lsit"], "unknown command 'lsit'; did you mean 'list'? (see transferctl --help)"),
            (["frobnicate"], "unknown command 'frobnicate' (see transferctl --help)"),
            (["download", "http://x/", "--ouput", "x"], "unknown option '--ouput'; did you mean '--output'?"),
            (["download", "http://x/", "--ouput=x"], "unknown option '--ouput'; did you mean '--output'?"),
            (["list", "--stat", "failed"], "unknown option '--stat'; did you mean '--state'?"),
            (["list", "--jsno"], "unknown option '--jsno'; did you mean '--json'?"),
            (["backup", "/tmp", "--too", "http://x/"], "unknown option '--too'; did you mean '--to'?"),
            (["wait", "1", "--progres"], "unknown option '--progres'; did you mean '--progress'?"),
            (["list", "--zzzzzz"], "unknown option '--zzzzzz'"),
        ]
        for (arguments, message) in hints {
            let result = cli.run(arguments)
            XCTAssertEqual(result.exitCode, 2, result.summary)
            XCTAssertEqual(result.stderr, "transferctl: \(message)\n", result.summary)
        }
        let daemonHint = cli.runner.run(binaries.transferd, ["--max-activ", "3"], timeout: 10)
        XCTAssertEqual(daemonHint.exitCode, 2, daemonHint.summary)
        XCTAssertEqual(daemonHint.stderr,
                       "transferd: unknown option '--max-activ'; did you mean '--max-active'? (see transferd --help)\n")
    }
}
