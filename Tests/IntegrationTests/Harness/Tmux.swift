import Foundation

/// A private tmux server (its own socket, no config) whose windows run commands in a real
/// terminal of a chosen size: what `watch` draws there is read back with `capture-pane`,
/// the screen and the scrollback above it. Stopped (with its windows) by `stop`.
final class Tmux {
    private let socket: String
    private let runner: CommandRunner
    private let python = URL(fileURLWithPath: "/usr/bin/python3")

    init(scratch: URL) throws {
        socket = "transferd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        runner = try CommandRunner(scratch: scratch)
    }

    /// Starts `command` (run by /bin/sh) in a new detached window `name` of `width` × `height`.
    /// When the command ends the pane stays, showing `EXIT=<status>` below what it printed.
    func start(_ name: String, width: Int, height: Int, command: String) throws {
        let shell = "\(command); echo EXIT=$?; exec sleep 600"
        let result = tmux(["-f", "/dev/null", "new-session", "-d", "-s", name, "-x", String(width), "-y", String(height), shell])
        guard result.exitCode == 0 else { throw HarnessError("tmux new-session failed: \(result.summary)") }
    }

    /// The screen of window `name` as lines (trailing blank lines dropped).
    func screen(_ name: String) -> [String] {
        lines(tmux(["capture-pane", "-p", "-t", name]).stdout)
    }

    /// Everything window `name` has shown: the scrollback and the screen.
    func history(_ name: String) -> [String] {
        lines(tmux(["capture-pane", "-p", "-S", "-", "-E", "-", "-t", name]).stdout)
    }

    func stop() {
        _ = tmux(["kill-server"])
    }

    /// Runs tmux with every descriptor above stderr closed: the server it forks would
    /// otherwise keep the one `Process` watches for the client's exit, and the client would
    /// seem never to end.
    private func tmux(_ arguments: [String]) -> CommandResult {
        let exec = "import os, sys; os.closerange(3, 65536); os.execv(sys.argv[1], sys.argv[1:])"
        return runner.run(python, ["-c", exec, "/usr/bin/tmux", "-L", socket] + arguments, timeout: 10)
    }

    private func lines(_ text: String) -> [String] {
        var lines = text.components(separatedBy: "\n")
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines
    }
}
