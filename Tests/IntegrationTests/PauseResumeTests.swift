import Foundation
import XCTest

/// Pause / resume over HTTP Range, a source that changes while paused, and a server
/// that ignores Range. Transfers go through nginx's rate-limited `/slow/` locations.
final class PauseResumeTests: IntegrationTestCase {
    override class var slowRate: String { "512k" }

    /// A running download has resume data from its first attempt on, before any checkpoint:
    /// nothing durable yet, so nothing to continue (its start records no row for it).
    func testARunningDownloadBeforeItsFirstCheckpointExportsNoBytes() throws {
        let size = 4 * MiB
        let name = "early.bin"
        try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)
        _ = try awaitProgress(id, atLeast: 64 * KiB, total: size)
        let resume = try cli.resumeData(id)
        XCTAssertEqual(jsonInt(resume["bytesReceived"]), 0, "no checkpoint yet: \(resume.jsonText)")
        XCTAssertEqual(resume["partialPath"] as? String, Files.partialPath(for: dest).path, "partialPath per the spec")
        XCTAssertEqual(resume["url"] as? String, nginx.url(.slow, name), "resume-data.url")
        XCTAssertEqual(cli.run(["cancel", String(id)]).exitCode, 0)
        _ = try cli.awaitState(id, "cancelled")
        XCTAssertEqual(cli.run(["resume-data", String(id)]).exitCode, 1, "a cancelled job has none")
    }

    func testPauseKeepsProgressAndResumeUsesRange() throws {
        let size = 4 * MiB
        let name = "pause.bin"
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)

        let seen = try awaitProgress(id, atLeast: 256 * KiB, total: size).bytesDone ?? 0
        XCTAssertFalse(Files.exists(dest), "destination must not exist while running")

        let pauseStarted = Date()
        let pause = cli.run(["pause", String(id)])
        XCTAssertEqual(pause.exitCode, 0, pause.summary)
        let paused = try cli.awaitState(id, "paused", timeout: 5)
        // The contract says 1 s; allow slack for process start-up and polling.
        XCTAssertLessThan(Date().timeIntervalSince(pauseStarted), 2, "a running transfer stops within 1 second")
        let kept = try XCTUnwrap(paused.bytesDone, "bytesDone: \(paused.jsonText)")
        XCTAssertGreaterThanOrEqual(kept, seen, "pause must keep progress: \(paused.jsonText)")
        XCTAssertLessThan(kept, size, "paused before the end: \(paused.jsonText)")
        XCTAssertFalse(Files.exists(dest), "destination must not exist while paused")

        // The kept bytes are on disk in the partial file and match the source's prefix.
        let resume = try cli.resumeData(id)
        XCTAssertEqual(jsonInt(resume["bytesReceived"]), kept, "resume-data.bytesReceived")
        XCTAssertEqual(jsonInt(resume["bytesTotal"]), size, "resume-data.bytesTotal")
        XCTAssertEqual(resume["url"] as? String, nginx.url(.slow, name), "resume-data.url")
        XCTAssertNotNil(resume["version"], "resume-data.version")
        XCTAssertNotNil(resume["etag"] as? String, "resume-data.etag (nginx sends one)")
        let partialPath = try XCTUnwrap(resume["partialPath"] as? String, "resume-data.partialPath")
        XCTAssertEqual(partialPath, Files.partialPath(for: dest).path, "partialPath per the spec")
        let partial = try Data(contentsOf: URL(fileURLWithPath: partialPath))
        let source = try Data(contentsOf: nginx.localPath(name))
        XCTAssertGreaterThanOrEqual(partial.count, kept, "partial file holds the kept bytes")
        XCTAssertTrue(partial.prefix(kept) == source.prefix(kept), "partial bytes equal the source prefix")

        let resumed = cli.run(["resume", String(id)])
        XCTAssertEqual(resumed.exitCode, 0, resumed.summary)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let gets = nginx.awaitGets(.slow, name, count: 2)
        XCTAssertGreaterThanOrEqual(gets.count, 2, "two GETs expected; log:\n\(nginx.describeLog())")
        if gets.count >= 2 {
            let second = gets[1]
            XCTAssertNotNil(second.range, "resumed request carries Range; log:\n\(nginx.describeLog())")
            XCTAssertNotEqual(second.range, "bytes=0-", "resume must not start from 0")
            XCTAssertNotNil(second.ifRange, "resumed request carries If-Range; log:\n\(nginx.describeLog())")
            XCTAssertEqual(second.status, 206, "server answered the Range with 206")
        }
        let sent = gets.reduce(0) { $0 + $1.bodyBytesSent }
        XCTAssertLessThan(sent, 2 * size, "nginx sent \(sent) bytes for a \(size)-byte file")

        // The attempt after resume asked for the kept offset and received only the rest.
        let job = try cli.job(id)
        let last = try XCTUnwrap(job.attemptLog.last, "attemptLog: \(job.jsonText)")
        let rangeStart = try XCTUnwrap(jsonInt(last["rangeStart"]), "rangeStart: \(job.jsonText)")
        XCTAssertGreaterThan(rangeStart, 0, "resumed attempt used a Range: \(job.jsonText)")
        XCTAssertLessThanOrEqual(rangeStart, kept, "resumed no further than the kept bytes: \(job.jsonText)")
        XCTAssertEqual(jsonInt(last["bytes"]), size - rangeStart, "resumed attempt received the rest: \(job.jsonText)")
        XCTAssertEqual(jsonInt(last["httpStatus"]), 206, "resumed attempt status: \(job.jsonText)")
    }

    func testResumeDataContinuesInADaemonWithAFreshDatabase() throws {
        let size = 3 * MiB
        let name = "export.bin"
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)
        try awaitProgress(id, atLeast: 256 * KiB, total: size)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        let paused = try cli.awaitState(id, "paused", timeout: 5)
        let kept = try XCTUnwrap(paused.bytesDone)

        let exported = cli.run(["resume-data", String(id)])
        XCTAssertEqual(exported.exitCode, 0, exported.summary)
        let file = workDir.appendingPathComponent("job.resume.json")
        try Data(exported.stdout.utf8).write(to: file)

        // Another machine, as far as the queue knows: the database is gone, the bytes are not.
        XCTAssertTrue(daemon.terminate(timeout: 5))
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(at: daemon.stateDir.appendingPathComponent("transfers.db" + suffix))
        }
        try daemon.start()
        XCTAssertTrue(try cli.jobs().isEmpty, "a fresh database has no jobs")

        let created = cli.run(["download", "--resume-data", file.path])
        XCTAssertEqual(created.exitCode, 0, created.summary)
        let newID = try XCTUnwrap(Int(created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), created.summary)
        try waitCompleted(newID)
        try assertCompletedDownload(newID, at: dest, sha256: sha, size: size)
        let first = try XCTUnwrap(try cli.job(newID).attemptLog.first)
        XCTAssertEqual(jsonInt(first["rangeStart"]), kept, "continued from the exported bytes")
        XCTAssertEqual(jsonInt(first["bytes"]), size - kept, "fetched only the rest")
    }

    func testResumeDataWithoutItsPartialFileIsRefused() throws {
        let file = workDir.appendingPathComponent("stale.resume.json")
        let dest = destination("gone.bin")
        let document: [String: Any] = [
            "version": 1, "url": nginx.url(.files, "gone.bin"), "path": dest.path,
            "partialPath": Files.partialPath(for: dest).path, "bytesReceived": 1000, "headers": [String](),
        ]
        try JSONSerialization.data(withJSONObject: document).write(to: file)
        let result = cli.run(["download", "--resume-data", file.path])
        XCTAssertEqual(result.exitCode, 2, result.summary)
        assertOneLineMessage(result.stderr, "missing partial file")
        XCTAssertTrue(result.stderr.contains("partial file"), result.stderr)
    }

    func testCompletePartialFileFinishesOnRangeNotSatisfiable() throws {
        let size = 1 * MiB + 3
        let name = "whole.bin"
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        // Resume data that says every byte is already here: the Range request gets a 416.
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: nginx.localPath(name), to: Files.partialPath(for: dest))
        let runner = try CommandRunner(scratch: workDir.appendingPathComponent("curl"))
        let head = runner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sI", nginx.url(.files, name)], timeout: 5)
        let etagLine = try XCTUnwrap(head.stdout.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("etag:") },
                                     head.summary)
        let etag = String(etagLine.dropFirst(5)).trimmingCharacters(in: .whitespaces)
        let document: [String: Any] = [
            "version": 1, "url": nginx.url(.files, name), "path": dest.path, "etag": etag,
            "partialPath": Files.partialPath(for: dest).path, "bytesReceived": size, "bytesTotal": size,
            "headers": [String](),
        ]
        let file = workDir.appendingPathComponent("whole.resume.json")
        try JSONSerialization.data(withJSONObject: document).write(to: file)

        let created = cli.run(["download", "--resume-data", file.path])
        XCTAssertEqual(created.exitCode, 0, created.summary)
        let id = try XCTUnwrap(Int(created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), created.summary)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let gets = nginx.awaitGets(.files, name, count: 1)
        XCTAssertEqual(gets.last?.status, 416, "log:\n\(nginx.describeLog())")
        XCTAssertEqual(gets.last?.bodyBytesSent ?? -1 > 1000, false, "no body was re-fetched")
    }

    func testCancelRunningRemovesPartialData() throws {
        let size = 3 * MiB
        let name = "cancel.bin"
        try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)
        try awaitProgress(id, atLeast: 256 * KiB, total: size)

        let cancel = cli.run(["cancel", String(id)])
        XCTAssertEqual(cancel.exitCode, 0, cancel.summary)
        try cli.awaitState(id, "cancelled", timeout: 5)
        let partial = Files.partialPath(for: dest)
        XCTAssertTrue(poll(timeout: 5) { !Files.exists(partial) }, "partial data is removed on cancel")
        XCTAssertFalse(Files.exists(dest), "no destination for a cancelled job")
        XCTAssertEqual(cli.wait([id], timeout: 5).exitCode, 1, "wait on a cancelled job exits 1")
        let again = cli.run(["cancel", String(id)])
        XCTAssertEqual(again.exitCode, 1, "cancelled is final: \(again.summary)")
        XCTAssertTrue(again.stderr.contains("cancelled"), "message names the state: \(again.summary)")
    }

    /// A cancel that arrives while an attempt is being prepared waits for the preparation: the
    /// cancel is recorded after the attempt, so it sticks across a restart. Another writer
    /// holding SQLite's lock keeps an upload's preparation in its last step (the record of its
    /// start, which an upload waits for before it sends anything).
    func testACancelDuringAnAttemptsPreparationWaitsForItAndSticks() throws {
        let source = try nginx.createFile(named: "prepared-up.bin", size: 64 * KiB)
        let holder = try holdTheOneSlot()
        let id = try cli.upload(nginx.davURL("up/prepared.bin"), ["-T", source.path])
        XCTAssertEqual(try cli.awaitState(id, "queued", timeout: 5).state, "queued", "the one slot is taken")
        let lock = try lockTheStore()
        defer { lock.release() }
        let pause = try background(["pause", String(holder)])
        XCTAssertTrue(poll(timeout: 5) { daemon.logTail(lines: 400).contains("job \(id): preparing attempt 1") },
                      "the freed slot's job is being prepared")
        let cancel = try background(["cancel", String(id)])
        XCTAssertTrue(poll(timeout: 5) { daemon.logTail(lines: 400).contains("job \(id): stops once its attempt is prepared") },
                      "the cancel waits for the preparation")
        try releaseAndCheckTheCancelSticks(id, holder: holder, lock: lock, pause: pause, cancel: cancel)
    }

    /// A download transfers while the record of its start is on its way to the store: a cancel
    /// meanwhile stops the transfer, is recorded after the start (so it sticks across a
    /// restart), and leaves no partial file.
    func testACancelWhileADownloadsStartIsRecordedSticksAndRemovesItsFile() throws {
        let holder = try holdTheOneSlot()
        let name = "prepared.bin"
        try makeSource(name, size: 2 * MiB)  // 4 s at the slow rate: still under way when the cancel comes
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)
        XCTAssertEqual(try cli.awaitState(id, "queued", timeout: 5).state, "queued", "the one slot is taken")
        let lock = try lockTheStore()
        defer { lock.release() }
        let pause = try background(["pause", String(holder)])
        XCTAssertTrue(poll(timeout: 5) { daemon.logTail(lines: 400).contains("job \(id): attempt 1 from byte 0") },
                      "the freed slot's job transfers while its start waits for the store")
        // A first attempt's file has no name until its first checkpoint names it (which waits
        // for the store too): the cancel leaves no file behind either way.
        let partial = Files.partialPath(for: dest)
        let cancel = try background(["cancel", String(id)])
        XCTAssertTrue(poll(timeout: 5) { !Files.exists(partial) },
                      "the cancel stopped the transfer and removed any file it had named before its record")
        try releaseAndCheckTheCancelSticks(id, holder: holder, lock: lock, pause: pause, cancel: cancel)
        XCTAssertFalse(Files.exists(partial))
        XCTAssertFalse(Files.exists(dest))
    }

    /// Lets the store go: the pause and the cancel are answered, and after a restart the job is
    /// still cancelled (its attempt's record came first) and the slot's holder still paused.
    private func releaseAndCheckTheCancelSticks(_ id: Int, holder: Int, lock: SQLiteWriteLock, pause: ChildProcess,
                                                cancel: ChildProcess) throws {
        lock.release()
        XCTAssertEqual(pause.waitForExit(timeout: 10), 0, "pause")
        XCTAssertEqual(cancel.waitForExit(timeout: 10), 0, "cancel")
        try cli.awaitState(id, "cancelled", timeout: 5)
        try restartDaemon()
        XCTAssertEqual(try cli.awaitState(id, "cancelled", timeout: 5).state, "cancelled",
                       "the attempt's record came first: the cancel sticks")
        XCTAssertEqual(try cli.awaitState(holder, "paused", timeout: 5).state, "paused")
    }

    /// A daemon with one slot, held by a download from a server that never answers (its job id).
    private func holdTheOneSlot() throws -> Int {
        try restartDaemon(arguments: ["--max-active", "1", "--log-level", "debug"])
        let silent = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", """
            import socket, sys, time
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
            print(s.getsockname()[1], flush=True); time.sleep(120)
            """], stdoutURL: workDir.appendingPathComponent("silent.out"), stderrURL: workDir.appendingPathComponent("silent.err"))
        addTeardownBlock { silent.stop() }
        var port = ""
        XCTAssertTrue(poll(timeout: 5) {
            port = (try? String(contentsOf: workDir.appendingPathComponent("silent.out"), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            return !port.isEmpty
        }, "the silent server listens")
        let holder = try cli.download("http://127.0.0.1:\(port)/never", to: destination("never.bin"))
        try cli.awaitState(holder, "running", timeout: 5)
        return holder
    }

    /// Another writer holding SQLite's write lock (released by the caller): the job that gets
    /// the slot once its holder is paused cannot record its start until then.
    private func lockTheStore() throws -> SQLiteWriteLock {
        try SQLiteWriteLock(database: daemon.stateDir.appendingPathComponent("transfers.db").path, runner: cli.runner)
    }

    /// `transferctl ARGS...` left running.
    private func background(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(executable: cli.binaries.transferctl, arguments: ["--state-dir", cli.stateDir.path] + arguments,
                         stdoutURL: workDir.appendingPathComponent("bg-\(arguments[0]).out"),
                         stderrURL: workDir.appendingPathComponent("bg-\(arguments[0]).err"))
    }

    /// A paused job still knows what it learned from the server: the size of the entity
    /// (`bytesTotal` is null only "when unknown") and the last HTTP status.
    func testPausedJobKeepsKnownTotalAndLastStatus() throws {
        let size = 3 * MiB
        let name = "known.bin"
        try makeSource(name, size: size)
        let id = try cli.download(nginx.url(.slow, name), to: destination(name))

        let running = try awaitProgress(id, atLeast: 256 * KiB, total: size)
        XCTAssertEqual(running.bytesTotal, size, "bytesTotal while running: \(running.jsonText)")
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        let paused = try cli.awaitState(id, "paused", timeout: 5)

        XCTAssertEqual(paused.bytesTotal, size, "bytesTotal while paused: \(paused.jsonText)")
        XCTAssertEqual(paused.httpStatus, 200, "httpStatus is the last status seen: \(paused.jsonText)")
        XCTAssertEqual(paused.attemptLog.last.flatMap { jsonInt($0["httpStatus"]) }, 200, paused.jsonText)
        let listed = try XCTUnwrap(try cli.jobs().first { $0.id == id }, "job in list --json")
        XCTAssertEqual(listed.bytesTotal, size, "list --json agrees with show: \(listed.jsonText)")
    }

    /// Scripts repeat themselves: pausing a paused job and resuming a queued one succeed with a
    /// note and change nothing; a command the state does not allow is still refused.
    func testPausingAPausedJobAndResumingAQueuedOneSucceedWithANote() throws {
        try makeSource("again.bin", size: 64 * KiB)
        let id = try cli.download(nginx.url(.files, "again.bin"), to: destination("again.bin"), ["--paused"])
        let before = try cli.job(id)

        let pause = cli.run(["pause", String(id)])
        XCTAssertEqual(pause.exitCode, 0, pause.summary)
        XCTAssertEqual(pause.stdout, "job \(id) is already paused; nothing to do\n", pause.summary)
        let after = try cli.job(id)
        XCTAssertEqual(after.state, "paused")
        XCTAssertEqual(after["updatedAt"] as? String, before["updatedAt"] as? String, "nothing recorded")

        try makeSource("slow.bin", size: 3 * MiB)
        let other = try cli.download(nginx.url(.slow, "slow.bin"), to: destination("slow.bin"), ["--paused"])
        let json = try XCTUnwrap(try cli.json(["pause", String(id), String(other)]) as? [[String: Any]])
        XCTAssertEqual(json.compactMap(\.id).sorted(), [id, other].sorted(), "--json lists the unchanged jobs too")
        XCTAssertEqual(cli.run(["resume", String(other)]).exitCode, 0)
        try awaitProgress(other, atLeast: 64 * KiB, total: 3 * MiB)
        let resumeRunning = cli.run(["resume", String(other)])
        XCTAssertEqual(resumeRunning.exitCode, 0, resumeRunning.summary)
        XCTAssertEqual(resumeRunning.stdout, "job \(other) is already running; nothing to do\n", resumeRunning.summary)
        XCTAssertEqual(cli.run(["cancel", String(other)]).exitCode, 0)

        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try cli.awaitState(id, "completed", timeout: 10)
        let completed = cli.run(["resume", String(id)])
        XCTAssertEqual(completed.exitCode, 1, "a completed job is not resumed: \(completed.summary)")
        XCTAssertTrue(completed.stderr.contains("it is completed"), completed.summary)
    }

    func testEntityChangedWhilePausedRestartsWithNewContent() throws {
        let name = "changing.bin"
        let oldSize = 4 * MiB
        try makeSource(name, size: oldSize)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slow, name), to: dest)

        try awaitProgress(id, atLeast: 256 * KiB, total: oldSize)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        try cli.awaitState(id, "paused", timeout: 5)

        let newSize = 3 * MiB + 4321
        let newSha = try cli.sha256(of: nginx.replaceFile(named: name, size: newSize))

        let resumed = cli.run(["resume", String(id)])
        XCTAssertEqual(resumed.exitCode, 0, resumed.summary)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: newSha, size: newSize)
        XCTAssertEqual(try cli.job(id).bytesTotal, newSize, "bytesTotal follows the new entity")
    }

    func testServerIgnoringRangeRestartsFromZero() throws {
        let name = "norange.bin"
        let size = 3 * MiB
        let sha = try makeSource(name, size: size)
        let dest = destination(name)
        let id = try cli.download(nginx.url(.slowNoRange, name), to: dest)

        try awaitProgress(id, atLeast: 256 * KiB, total: size)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        try cli.awaitState(id, "paused", timeout: 5)
        XCTAssertFalse(Files.exists(dest), "destination must not exist while paused")

        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        let gets = nginx.awaitGets(.slowNoRange, name, count: 2)
        XCTAssertGreaterThanOrEqual(gets.count, 2, "log:\n\(nginx.describeLog())")
        XCTAssertTrue(gets.allSatisfy { $0.status == 200 }, "max_ranges 0 answers 200; log:\n\(nginx.describeLog())")

        // The resumed attempt asked for a range, got the whole entity, and restarted from 0.
        let job = try cli.job(id)
        let last = try XCTUnwrap(job.attemptLog.last, "attemptLog: \(job.jsonText)")
        XCTAssertGreaterThan(jsonInt(last["rangeStart"]) ?? 0, 0, "resumed attempt asked for a Range: \(job.jsonText)")
        XCTAssertEqual(jsonInt(last["bytes"]), size, "whole entity received in that attempt: \(job.jsonText)")
        XCTAssertEqual(jsonInt(last["httpStatus"]), 200, job.jsonText)
    }

    /// The sanity check the whole file relies on: nginx really ignores Range on /norange/.
    func testHarnessNoRangeLocationIgnoresRange() throws {
        try makeSource("probe.bin", size: 64 * KiB)
        let curl = try CommandRunner(scratch: workDir.appendingPathComponent("curl"))
        let result = curl.run(URL(fileURLWithPath: "/usr/bin/curl"),
                              ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Range: bytes=100-",
                               nginx.url(.norange, "probe.bin")], timeout: 10)
        XCTAssertEqual(result.trimmedStdout, "200", result.summary)
        let ranged = curl.run(URL(fileURLWithPath: "/usr/bin/curl"),
                              ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Range: bytes=100-",
                               nginx.url(.files, "probe.bin")], timeout: 10)
        XCTAssertEqual(ranged.trimmedStdout, "206", ranged.summary)
    }
}
