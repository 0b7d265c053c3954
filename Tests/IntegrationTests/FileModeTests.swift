import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `--overwrite` replaces only regular files and keeps their mode; a new file and the
/// directories made for it follow the umask of the client that queued the job.
final class FileModeTests: IntegrationTestCase {
    private func mode(_ url: URL) -> mode_t? {
        var info = stat()
        return lstat(url.path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// `transferctl download URL -o PATH OPTIONS` run under `umask`.
    private func download(_ name: String, to dest: URL, umask: String, _ options: [String] = []) throws -> Int {
        let result = cli.runner.run(URL(fileURLWithPath: "/bin/bash"),
                                    ["-c", "umask \(umask) && exec \"$@\"", "bash", binaries.transferctl.path,
                                     "--state-dir", daemon.stateDir.path, "download", nginx.url(.files, name),
                                     "-o", dest.path] + options, timeout: 20)
        guard result.exitCode == 0, let id = Int(result.trimmedStdout) else { throw HarnessError("download: \(result.summary)") }
        return id
    }

    func testNewFilesAndDirectoriesFollowTheClientsUmask() throws {
        try makeSource("m.bin", size: 10 * KiB)
        for (umask, file, directory) in [("077", mode_t(0o600), mode_t(0o700)), ("002", mode_t(0o664), mode_t(0o775))] {
            let dest = downloads.appendingPathComponent("u\(umask)/deeper/m.bin")
            let id = try download("m.bin", to: dest, umask: umask)
            try waitCompleted(id)
            XCTAssertEqual(mode(dest).map { String($0, radix: 8) }, String(file, radix: 8), "file under umask \(umask)")
            XCTAssertEqual(mode(dest.deletingLastPathComponent()).map { String($0, radix: 8) }, String(directory, radix: 8),
                           "directory under umask \(umask)")
        }
    }

    func testOverwriteKeepsTheModeOfTheFileItReplaces() throws {
        let sha = try makeSource("o.bin", size: 10 * KiB)
        let dest = destination("o.bin")
        try Data("old".utf8).write(to: dest)
        XCTAssertEqual(chmod(dest.path, 0o600), 0)
        let id = try download("o.bin", to: dest, umask: "022", ["--overwrite"])
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: 10 * KiB)
        XCTAssertEqual(mode(dest), 0o600, "a 0600 file stays 0600")
    }

    func testOverwriteNeverReplacesAFIFOOrADevice() throws {
        try makeSource("f.bin", size: 10 * KiB)
        let fifo = destination("fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o644), 0)
        let refused = cli.run(["download", nginx.url(.files, "f.bin"), "-o", fifo.path, "--overwrite"])
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains("not a regular file"), refused.stderr)
        assertOneLineMessage(refused.stderr, "a FIFO")

        // One that appears while the job waits is not replaced either.
        let later = destination("later")
        let id = try cli.download(nginx.url(.files, "f.bin"), to: later, ["--overwrite", "--paused"])
        if geteuid() == 0 {
            XCTAssertEqual(mknod(later.path, S_IFCHR | 0o666, dev_t((1 << 8) | 3)), 0, "a character device like /dev/null")
        } else {
            XCTAssertEqual(mkfifo(later.path, 0o644), 0)
        }
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        let failed = try cli.awaitState(id, "failed")
        XCTAssertTrue((failed.errorMessage ?? "").contains("not a regular file"), failed.jsonText)
        var info = stat()
        XCTAssertEqual(lstat(later.path, &info), 0)
        XCTAssertNotEqual(info.st_mode & S_IFMT, S_IFREG, "the special file is still there")
        XCTAssertEqual(mode(fifo).map { $0 & 0o777 }, 0o644)
    }
}
