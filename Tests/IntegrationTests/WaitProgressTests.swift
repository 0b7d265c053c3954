import Foundation
import XCTest

/// `wait --progress`: on a terminal (stderr), one line redrawn in place with `\r` (bar,
/// percent, bytes, rate, ETA), ended with a newline before the normal output; when stderr is
/// not a terminal, nothing drawn at all.
final class WaitProgressTests: IntegrationTestCase {
    override class var slowRate: String { "1m" }

    /// Runs `transferctl ARGS` with stderr on a pseudo-terminal (raw: no `\n` to `\r\n`),
    /// stdout to a file; returns what the terminal received.
    private func runOnTerminal(_ arguments: [String]) throws -> (terminal: String, result: CommandResult) {
        let shown = workDir.appendingPathComponent("terminal.out")
        let script = """
            import os, pty, subprocess, sys, tty
            master, slave = pty.openpty()
            tty.setraw(slave)
            child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stderr=slave)
            os.close(slave)
            shown = bytearray()
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: nothing has the terminal open any more
                    break
                if not chunk:
                    break
                shown += chunk
            status = child.wait()
            open(sys.argv[1], "wb").write(shown)
            sys.exit(status)
            """
        let result = cli.runner.run(URL(fileURLWithPath: "/usr/bin/python3"),
                                    ["-c", script, shown.path, binaries.transferctl.path, "--state-dir", cli.stateDir.path]
                                        + arguments, timeout: 60)
        return (try String(contentsOf: shown, encoding: .utf8), result)
    }

    func testOnATerminalOneLineIsRedrawnInPlaceAndEndedBeforeTheOutput() throws {
        let size = 2 * MiB
        try makeSource("p.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "p.bin"), to: destination("p.bin"))
        let (terminal, result) = try runOnTerminal(["wait", String(id), "--progress", "--timeout", "30"])
        XCTAssertEqual(result.exitCode, 0, result.summary + "\nterminal: \(terminal.debugDescription)")
        XCTAssertEqual(result.stdout, "job \(id) completed\n", "the normal output, on stdout, undisturbed")

        XCTAssertTrue(terminal.hasPrefix("\r["), terminal.debugDescription)
        XCTAssertTrue(terminal.hasSuffix("\n"), "the line is ended: \(terminal.debugDescription)")
        XCTAssertEqual(terminal.filter { $0 == "\n" }.count, 1, "one line, redrawn: \(terminal.debugDescription)")
        let draws = terminal.dropLast().split(separator: "\r").map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
        XCTAssertGreaterThan(draws.count, 2, "redrawn as bytes arrive: \(draws)")
        XCTAssertTrue(draws.allSatisfy { $0.hasPrefix("[") && $0.count < 80 }, "bar first, within the width: \(draws)")
        XCTAssertTrue(draws.contains { $0.contains("%") && ($0.contains("KiB/s") || $0.contains("MiB/s")) }, "\(draws)")
        XCTAssertTrue(draws.contains { $0.contains("ETA ") && $0.contains(" / 2.0 MiB") }, "ETA while it runs: \(draws)")
        let last = try XCTUnwrap(draws.last)
        XCTAssertTrue(last.hasPrefix("[" + String(repeating: "#", count: 10)) && last.contains("100.0%")
                      && last.contains("2.0 MiB / 2.0 MiB") && last.hasSuffix("1 of 1 ended"), last)
    }

    func testNothingIsDrawnWhenStderrIsNotATerminal() throws {
        let size = 512 * KiB
        try makeSource("q.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "q.bin"), to: destination("q.bin"))
        let result = cli.run(["wait", String(id), "--progress", "--timeout", "30"], timeout: 40)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertEqual(result.stdout, "job \(id) completed\n")
        XCTAssertEqual(result.stderrBytes, [], "not a terminal: nothing drawn")
    }

    func testATimeoutAndAFailureEndTheLineFirst() throws {
        try makeSource("r.bin", size: 4 * MiB)
        let running = try cli.download(nginx.url(.slow, "r.bin"), to: destination("r.bin"))
        let (terminal, timedOut) = try runOnTerminal(["wait", String(running), "--progress", "--timeout", "0.5"])
        XCTAssertEqual(timedOut.exitCode, 124, timedOut.summary)
        XCTAssertTrue(terminal.hasPrefix("\r[") && terminal.hasSuffix("\ntransferctl: timed out after 0.5 s; the jobs are still going\n"),
                      terminal.debugDescription)

        let missing = try cli.download(nginx.url(.files, "missing.bin"), to: destination("missing.bin"))
        let (failedTerminal, failed) = try runOnTerminal(["wait", String(missing), "--progress", "--timeout", "30"])
        XCTAssertEqual(failed.exitCode, 1, failed.summary)
        XCTAssertTrue(failed.stdout.hasPrefix("job \(missing) failed"), failed.summary)
        XCTAssertTrue(failedTerminal.hasSuffix("1 of 1 ended\u{1B}[K\ntransferctl: job \(missing) failed\n"),
                      failedTerminal.debugDescription)
    }
}
