import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// An endless body cannot fill the disk (`--max-filesize`), and a command is acknowledged only
/// once recorded, even on a full disk, where a cancel still frees its partial file.
final class DiskGuardTests: FaultServerTestCase {
    private var smallDisk: URL?
    private var extra: Daemon?

    override func tearDownWithError() throws {
        extra?.stop()
        if let smallDisk { umount(smallDisk.path) }
        try super.tearDownWithError()
    }

    /// A daemon (and its CLI) on a state directory of its own, with `arguments`.
    private func startDaemon(stateDir: URL, _ arguments: [String] = []) throws -> CLI {
        daemon.stop()
        extra?.stop()
        let other = try CLI(binaries: binaries, stateDir: stateDir, scratch: workDir.appendingPathComponent("cli-\(UUID().uuidString)"))
        let started = Daemon(binaries: binaries, stateDir: stateDir, logURL: workDir.appendingPathComponent("extra.log"),
                             cli: other, extraArguments: arguments)
        extra = started
        try started.start()
        return other
    }

    /// A 4 MiB tmpfs (or of `size`) for the state directory (and downloads), or skip where
    /// mounting is not allowed.
    private func mountSmallDisk(size: String = "4m") throws -> URL {
        let mountPoint = workDir.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        try XCTSkipUnless(mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=\(size)") == 0,
                          "cannot mount a tmpfs here: \(String(cString: strerror(errno)))")
        smallDisk = mountPoint
        return mountPoint
    }

    private func fill(_ directory: URL) throws {
        let filler = directory.appendingPathComponent("filler")
        try Data().write(to: filler)
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let block = Data(repeating: 0, count: 64 * KiB)
        while (try? handle.write(contentsOf: block)) != nil {}
    }

    func testAnEndlessBodyStopsAtMaxFilesizeAndLeavesNothing() throws {
        let dest = destination("endless.bin")
        let id = try cli.download(faults.url("endless.bin", size: 256 * KiB, ["endless": "1"]), to: dest,
                                  ["--max-filesize", "1M", "--retry", "3"])
        let failed = try cli.awaitState(id, "failed")
        XCTAssertEqual(failed.errorCode, "too_large", failed.jsonText)
        XCTAssertEqual(failed.attempts, 1, "too_large is not retried: \(failed.jsonText)")
        XCTAssertEqual(failed.bytesDone, 0, failed.jsonText)
        XCTAssertFalse(Files.exists(Files.partialPath(for: dest)), "the partial file was removed")
        XCTAssertFalse(Files.exists(dest))

        // An announced length past the limit fails before a byte is written.
        let announced = try cli.download(faults.url("big.bin", size: 3 * MiB), to: destination("big.bin"),
                                         ["--max-filesize", "1M"])
        XCTAssertEqual(try cli.awaitState(announced, "failed").errorCode, "too_large")
        XCTAssertFalse(Files.exists(Files.partialPath(for: destination("big.bin"))))
        XCTAssertTrue(cli.run(["show", String(announced)]).stdout.contains("max size:  1.0 MiB"))

        // The daemon's own limit applies to jobs that set none.
        let other = try startDaemon(stateDir: workDir.appendingPathComponent("state-limited"), ["--max-filesize", "2M"])
        let unset = try other.download(faults.url("endless2.bin", size: 256 * KiB, ["endless": "1"]), to: destination("endless2.bin"))
        XCTAssertEqual(try other.awaitState(unset, "failed").errorCode, "too_large")
    }

    func testACommandIsAcknowledgedOnlyOnceRecorded() throws {
        let disk = try mountSmallDisk()
        let stateDir = disk.appendingPathComponent("state")
        var ctl = try startDaemon(stateDir: stateDir)
        let id = try ctl.download(faults.url("x.bin", size: 64 * KiB), to: destination("x.bin"), ["--paused"])
        try fill(disk)

        let refused = ctl.run(["cancel", String(id)])
        XCTAssertEqual(refused.exitCode, 1, refused.summary)
        XCTAssertTrue(refused.stderr.contains("cannot record the cancel of job \(id)"), refused.stderr)
        assertOneLineMessage(refused.stderr, "unrecorded cancel")
        ctl = try startDaemon(stateDir: stateDir)
        XCTAssertEqual(try ctl.job(id).state, "paused", "what was not acknowledged did not happen")

        try FileManager.default.removeItem(at: disk.appendingPathComponent("filler"))
        XCTAssertEqual(ctl.run(["cancel", String(id)]).exitCode, 0, "said again, it converges")
        ctl = try startDaemon(stateDir: stateDir)
        XCTAssertEqual(try ctl.job(id).state, "cancelled", "an acknowledged cancel survives a restart")
    }

    /// A small file's body is gathered and written in one piece once all of it has arrived: a
    /// full disk then pauses the job as it pauses a large one, and once there is space again the
    /// job completes.
    func testASmallFileThatFindsTheDiskFullPausesAndCompletesOnceThereIsSpace() throws {
        let disk = try mountSmallDisk(size: "128k")
        let size = 200 * KiB
        let sha = try makeSource("small.bin", size: size)
        let dest = disk.appendingPathComponent("small.bin")
        let id = try cli.download(nginx.url(.files, "small.bin"), to: dest, ["--retry", "0"])
        let paused = try cli.awaitState(id, "paused", timeout: 15)
        XCTAssertEqual(paused.errorCode, "disk_full", paused.jsonText)
        XCTAssertFalse(Files.exists(dest), "no destination while the disk is full")

        XCTAssertEqual(mount("tmpfs", disk.path, "tmpfs", UInt(MS_REMOUNT), "size=1m"), 0, String(cString: strerror(errno)))
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
    }

    /// The disk that holds the state directory fills with a download: the job pauses with
    /// `disk_full`, keeps its bytes, and a cancel removes them first, so it can be recorded.
    func testCancelOfADiskFullJobFreesItsSpaceAndIsRecorded() throws {
        let disk = try mountSmallDisk()
        let stateDir = disk.appendingPathComponent("state")
        var ctl = try startDaemon(stateDir: stateDir)
        let dest = disk.appendingPathComponent("downloads/big.bin")
        let id = try ctl.download(faults.url("big.bin", size: 8 * MiB), to: dest, ["--retry", "0"])
        let paused = try ctl.awaitState(id, "paused", timeout: 20)
        XCTAssertEqual(paused.errorCode, "disk_full", paused.jsonText)
        XCTAssertTrue(Files.exists(Files.partialPath(for: dest)), "a disk_full pause frees nothing by itself")

        let cancelled = ctl.run(["cancel", String(id)])
        XCTAssertEqual(cancelled.exitCode, 0, cancelled.summary)
        XCTAssertFalse(Files.exists(Files.partialPath(for: dest)), "the cancel removed the partial file")
        ctl = try startDaemon(stateDir: stateDir)
        let job = try ctl.job(id)
        XCTAssertEqual(job.state, "cancelled", "and was recorded: \(job.jsonText)")
    }
}
