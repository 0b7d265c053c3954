import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The daemon trusts only a state directory and files its own user owns and nobody else can
/// write; the CLI talks only to a socket of its own user or root; no destination lies inside
/// the state directory.
final class StateTrustTests: IntegrationTestCase {
    private var listener: ChildProcess?

    override func tearDownWithError() throws {
        listener?.stop(grace: 1)
        try super.tearDownWithError()
    }

    private func requireRoot() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to make files of another uid")
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs /usr/bin/setpriv")
    }

    /// transferd on `stateDir`, expected to refuse to start: exit 1 with `message` in its output.
    private func assertDaemonRefuses(_ stateDir: URL, saying message: String,
                                     file: StaticString = #filePath, line: UInt = #line) {
        let result = cli.runner.run(binaries.transferd, ["--state-dir", stateDir.path], timeout: 10)
        XCTAssertEqual(result.exitCode, 1, result.summary, file: file, line: line)
        XCTAssertTrue(result.stderr.contains(message), "expected '\(message)': \(result.stderr)", file: file, line: line)
        assertOneLineMessage(result.stderr, "refusal", file: file, line: line)
    }

    func testAStateDirectoryOfAnotherUserOrWritableByOthersIsRefused() throws {
        try requireRoot()
        let foreign = workDir.appendingPathComponent("foreign-state")
        try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: true)
        XCTAssertEqual(chown(foreign.path, 65534, 65534), 0)
        XCTAssertEqual(chmod(foreign.path, 0o777), 0)
        assertDaemonRefuses(foreign, saying: "belongs to uid 65534")
        XCTAssertFalse(Files.exists(foreign.appendingPathComponent("transfers.db")), "nothing was opened there")

        let open = workDir.appendingPathComponent("open-state")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(open.path, 0o777), 0)
        assertDaemonRefuses(open, saying: "writable by others")

        // Ours and private, but with a database another user planted.
        let planted = workDir.appendingPathComponent("planted-state")
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(planted.path, 0o700), 0)
        let database = planted.appendingPathComponent("transfers.db")
        try Data().write(to: database)
        XCTAssertEqual(chown(database.path, 65534, 65534), 0)
        assertDaemonRefuses(planted, saying: "belongs to uid 65534")
    }

    func testADatabaseReadableByOthersIsMadePrivateWithItsJournal() throws {
        daemon.stop()
        let database = daemon.stateDir.appendingPathComponent("transfers.db")
        XCTAssertEqual(chmod(database.path, 0o644), 0)
        try daemon.start()
        _ = try cli.download(nginx.url(.files, "none.bin"), to: destination("x.bin"),
                             ["--paused", "-H", "Authorization: Bearer secret-token"])
        for suffix in ["", "-wal", "-shm"] {
            let path = database.path + suffix
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            XCTAssertEqual(info.st_mode & 0o077, 0, "\(path) is owner-only (mode \(String(info.st_mode & 0o777, radix: 8)))")
        }
    }

    /// A socket another user put where the CLI looks is never sent a request: not when the file
    /// is theirs, and not when the file was given to root but the process behind it is theirs.
    func testTheCLIRefusesASocketOfAnotherUser() throws {
        try requireRoot()
        let shared = workDir.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(workDir.path, 0o755), 0)
        XCTAssertEqual(chmod(shared.path, 0o777), 0)
        let socket = shared.appendingPathComponent("spoof.sock")
        let captured = shared.appendingPathComponent("captured")
        try Data().write(to: captured)
        XCTAssertEqual(chown(captured.path, 65534, 65534), 0)
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
            out = open(sys.argv[2], 'ab')
            while True:
                c, _ = s.accept(); c.settimeout(2)
                try:
                    out.write(c.recv(65536)); out.flush()
                except OSError:
                    pass
                c.close()
            """
        listener = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
                                    arguments: ["--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                                "/usr/bin/python3", "-c", script, socket.path, captured.path],
                                    stdoutURL: shared.appendingPathComponent("listener.log"),
                                    stderrURL: shared.appendingPathComponent("listener.log"))
        XCTAssertTrue(poll(timeout: 10) { Files.exists(socket) }, "the spoofing listener is up")

        let request = ["--socket", socket.path, "download", nginx.url(.files, "x.bin"), "-o", destination("x.bin").path,
                       "-H", "Authorization: Bearer secret-token"]
        let byOwner = cli.runner.run(binaries.transferctl, request, timeout: 10)
        XCTAssertEqual(byOwner.exitCode, 1, byOwner.summary)
        XCTAssertTrue(byOwner.stderr.contains("belongs to uid 65534"), byOwner.stderr)
        assertOneLineMessage(byOwner.stderr, "spoofed socket")

        XCTAssertEqual(chown(socket.path, 0, 0), 0)
        let byPeer = cli.runner.run(binaries.transferctl, request, timeout: 10)
        XCTAssertEqual(byPeer.exitCode, 1, byPeer.summary)
        XCTAssertTrue(byPeer.stderr.contains("belongs to uid 65534"), byPeer.stderr)
        XCTAssertEqual(try Data(contentsOf: captured).count, 0, "nothing was sent to the spoofing listener")
    }

    func testADestinationInsideTheStateDirectoryIsRefused() throws {
        let kept = try cli.download(nginx.url(.files, "kept.bin"), to: destination("kept.bin"), ["--paused"])
        let link = workDir.appendingPathComponent("state-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: daemon.stateDir)
        for path in [daemon.stateDir.appendingPathComponent("transfers.db").path, link.path + "/transfers.db",
                     daemon.stateDir.path + "/sub/../x.bin"] {
            let result = cli.run(["download", nginx.url(.files, "x.bin"), "-o", path, "--overwrite"])
            XCTAssertEqual(result.exitCode, 2, result.summary)
            XCTAssertTrue(result.stderr.contains("state directory"), result.stderr)
        }
        XCTAssertEqual(try cli.job(kept).state, "paused", "the store is intact")
    }
}
