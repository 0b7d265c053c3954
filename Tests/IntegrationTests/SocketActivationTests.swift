import Foundation
import XCTest

/// systemd socket activation: transferd started with a bound, listening socket as descriptor
/// 3 and `LISTEN_FDS=1`, `LISTEN_PID=` its pid (what contrib/transferd.socket makes systemd
/// do) serves that socket, keeps it from its children, and leaves its file in place; anything
/// else on descriptor 3 is refused.
final class SocketActivationTests: IntegrationTestCase {
    /// Binds and listens on argv[2] (or, with mode "file", opens a regular file there), puts it
    /// on descriptor 3 and execs argv[3:] as the same process with the variables systemd sets.
    private static let activator = """
        import os, socket, sys
        mode, path = sys.argv[1], sys.argv[2]
        if mode == "listen":
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            previous = os.umask(0o177)
            listener.bind(path)
            os.umask(previous)
            listener.listen(64)
            descriptor = listener.fileno()
        else:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.dup2(descriptor, 3)
        os.set_inheritable(3, True)
        environment = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS="1", LISTEN_FDNAMES="transferd.socket")
        os.execve(sys.argv[3], sys.argv[3:], environment)
        """

    func testTheDaemonServesTheSocketItIsHandedAndKeepsItFromItsChildren() throws {
        daemon.stop()
        let socket = daemon.socketPath
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "a daemon that made its socket removes it")
        try restartDaemon(launcher: ["/usr/bin/python3", "-c", Self.activator, "listen", socket])
        let log = daemon.logTail()
        XCTAssertTrue(log.contains("listening on \(socket) (socket from systemd)"), log)
        let pid = try XCTUnwrap(daemon.child?.pid)
        let handed = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/3")
        XCTAssertTrue(handed.hasPrefix("socket:["), "descriptor 3 is still the socket: \(handed)")

        // It works, and a hook (a child) sees neither the variables nor the socket.
        try makeSource("s.bin", size: 256 * KiB)
        let seen = workDir.appendingPathComponent("hook.txt")
        let hook = "{ env; echo ---; ls -l /proc/$$/fd; } > '\(seen.path).tmp' && mv '\(seen.path).tmp' '\(seen.path)'"
        let id = try cli.download(nginx.url(.files, "s.bin"), to: destination("s.bin"), ["--on-complete", hook])
        try waitCompleted(id)
        XCTAssertTrue(poll(timeout: 10) { Files.exists(seen) }, "the hook ran")
        let environment = try String(contentsOf: seen, encoding: .utf8)
        XCTAssertFalse(environment.contains("LISTEN_"), "the variables are unset:\n\(environment)")
        XCTAssertFalse(environment.contains(handed), "the socket is close-on-exec:\n\(environment)")

        // SIGTERM: exit 0 as ever, and systemd's socket file stays.
        XCTAssertTrue(daemon.terminate())
        XCTAssertTrue(FileManager.default.fileExists(atPath: socket), "the handed socket's file is not removed")

        // Started again the usual way, it replaces the stale file with its own socket.
        try restartDaemon()
        let ready = daemon.logTail().split(separator: "\n").filter { $0.contains(" ready: ") }
        XCTAssertEqual(ready.count, 3, "the test's first daemon, the one handed the socket, this one: \(ready)")
        XCTAssertTrue(ready.last?.hasSuffix("listening on \(socket)") ?? false, "\(ready)")
    }

    func testAnythingButAListeningUnixSocketOnDescriptor3IsRefused() throws {
        daemon.stop()
        let file = workDir.appendingPathComponent("not-a-socket")
        let result = cli.runner.run(URL(fileURLWithPath: "/usr/bin/python3"),
                                    ["-c", Self.activator, "file", file.path, binaries.transferd.path]
                                        + ["--state-dir", cli.stateDir.path], timeout: 15)
        XCTAssertEqual(result.exitCode, 1, result.summary)
        XCTAssertEqual(result.stderr, "transferd: cannot listen on the socket from systemd: the descriptor systemd passed (3) "
            + "is not a listening Unix stream socket: it is not a socket (transferd.socket needs ListenStream=PATH)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: daemon.socketPath), "no socket of its own either")
    }
}
