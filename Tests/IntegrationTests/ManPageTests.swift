import Foundation
import XCTest

/// transferctl(1) and transferd(8) are made from the help texts (`--man`); the pages in man/
/// must be what the programs make now, and man(1) must render them without a warning.
/// After a help text changed: `UPDATE_GOLDEN=1 swift test --filter ManPageTests` rewrites them.
final class ManPageTests: IntegrationTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func testTheManPagesInTheRepositoryAreCurrentAndRenderWithoutWarnings() throws {
        for (program, page) in [(binaries.transferctl, "man/transferctl.1"), (binaries.transferd, "man/transferd.8")] {
            let made = cli.runner.run(program, ["--man"], timeout: 10)
            XCTAssertEqual(made.exitCode, 0, made.summary)
            let stored = Self.repository.appendingPathComponent(page)
            if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
                try made.stdout.write(to: stored, atomically: true, encoding: .utf8)
            }
            XCTAssertEqual(made.stdout, try String(contentsOf: stored, encoding: .utf8),
                           "\(page) is stale: UPDATE_GOLDEN=1 swift test --filter ManPageTests regenerates it")

            let warnings = cli.runner.run(URL(fileURLWithPath: "/bin/sh"),
                                          ["-c", "MANWIDTH=80 man --warnings -l \"$0\" 2>&1 >/dev/null", stored.path],
                                          timeout: 30)
            XCTAssertEqual(warnings.exitCode, 0, warnings.summary)
            XCTAssertEqual(warnings.stdout, "", "man --warnings -l \(page)")
        }

        // What the help says is on the page: each command's synopsis, the daemon's options.
        let rendered = cli.runner.run(URL(fileURLWithPath: "/bin/sh"),
                                      ["-c", "MANWIDTH=200 man -l \"$0\" 2>/dev/null",
                                       Self.repository.appendingPathComponent("man/transferctl.1").path], timeout: 30)
        for synopsis in ["transferctl download URL -o PATH|-o DIR/|-O [options]", "transferctl completion bash|zsh|fish",
                         "transferctl wait ID... | --batch B | --all [--timeout SECONDS] [--progress]",
                         "transferctl - controls transferd, the resumable transfer daemon", "transferd(8)"] {
            XCTAssertTrue(rendered.stdout.contains(synopsis), "transferctl(1) shows '\(synopsis)':\n\(rendered.stdout)")
        }
        let daemonPage = cli.runner.run(URL(fileURLWithPath: "/bin/sh"),
                                        ["-c", "MANWIDTH=200 man -l \"$0\" 2>/dev/null",
                                         Self.repository.appendingPathComponent("man/transferd.8").path], timeout: 30)
        for option in ["--max-active N", "--limit-schedule T", "--log-level LEVEL", "LISTEN_FDS=1"] {
            XCTAssertTrue(daemonPage.stdout.contains(option), "transferd(8) shows '\(option)':\n\(daemonPage.stdout)")
        }
    }
}
