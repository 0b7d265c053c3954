import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// One client of the daemon's own uid tries to take its memory or its descriptors: requests
/// whose replies it never reads, a `wait` naming one job hundreds of thousands of times,
/// manifest chunks it never finishes, more idle connections than the daemon has descriptors,
/// more transfers than descriptors. Under each, the owner's `transferctl stats` answers within a
/// second, the daemon's memory stays bounded and transfers complete (docs/control-protocol.md#limits).
final class ClientExhaustionTests: IntegrationTestCase {
    /// Generous: an idle daemon holds about 30 MiB; the largest bound (staged manifests, 128 MiB
    /// of requests) adds about 170.
    static let maxResidentMiB = 300

    func testAClientThatDoesNotReadItsRepliesIsNotReadEither() throws {
        try queuePausedJobs(200)  // each `list` answer: about 150 KB
        let attacker = try UnixSocketConnection(path: daemon.socketPath, timeout: 1)
        let requests = 30_000  // 0.9 MB, more than the socket holds; 4.5 GB of answers, were they all made
        let lines = Data(String(repeating: #"{"version":1,"command":"list"}"# + "\n", count: requests).utf8)
        let flood = Flood(attacker, lines)
        defer { flood.stop() }
        flood.awaitBlockedOrDone()
        // A daemon that read it all is on its way to gigabytes: stop it at once (tearDown).
        guard flood.sent < lines.count else { return XCTFail("the daemon read every request of a client that reads nothing") }
        guard assertOwnerServed("while a client pipelines `list` without reading") else { return }

        // Once the client reads, the daemon reads its requests again and answers them.
        flood.stop()
        var answers = 0
        var pending: [UInt8] = []
        while answers < 60 {
            // The daemon answers the reads of one group commit together (up to 16 requests in
            // progress, 150 KB each): on a busy machine a debug build can be quiet for longer
            // than the socket's one-second timeout between two answers, and is not wedged.
            let bytes = attacker.receive(waitingUpTo: 30)
            guard !bytes.isEmpty else { break }
            pending += bytes
            while let newline = pending.firstIndex(of: 10) {
                XCTAssertNotNil(String(decoding: pending[..<newline], as: UTF8.self).range(of: #""ok":true"#))
                pending.removeSubrange(...newline)
                answers += 1
            }
        }
        XCTAssertEqual(answers, 60, "answers keep coming as the client reads them")
    }

    func testAWaitNamingOneJobManyTimesWaitsForOneJob() throws {
        let id = try cli.download(nginx.url(.files, "never"), to: destination("never"), ["--paused"])
        XCTAssertEqual(cli.run(["cancel", String(id)]).exitCode, 0)
        XCTAssertLessThan(id, 10, "one digit, so that 520,000 copies fit in a request line")

        // An ended job (read from the store), named 50,000 times: one store read, one job answered.
        let waiter = try send(#"{"version":1,"id":7,"command":"wait","ids":[\#(repeated(id, 50_000))]}"#)
        guard assertOwnerServed("while a wait names one job 50,000 times") else { return }
        let waited = try answer(on: waiter)
        XCTAssertEqual(waited["ok"] as? Bool, true, "\(waited)")
        XCTAssertEqual((waited["jobs"] as? [[String: Any]])?.count, 1, "answered once per job")

        // The red team's 520,000 copies, and 100,001 distinct ids: refused before any work.
        for ids in [repeated(id, 520_000), (1...100_001).map(String.init).joined(separator: ",")] {
            let refused = try answer(on: try send(#"{"version":1,"command":"wait","ids":[\#(ids)]}"#))
            XCTAssertEqual((refused["error"] as? [String: Any])?["code"] as? String, "too_large", "\(refused)")
        }
        assertOwnerServed("after requests naming too many ids")
    }

    func testStagedManifestChunksAreBoundedAndFreedWhenTheirConnectionCloses() throws {
        let baseline = try XCTUnwrap(daemon.residentMiB)
        // Chunks of almost 1 MiB (entries with a 2 KB header each), never final, on three
        // connections in turn: 300 MB of requests.
        let entry = manifestEntry(path: destination("staged").path, paused: true,
                                  header: "X-Pad: " + String(repeating: "p", count: 2000))
        let entries = Array(repeating: entry, count: (MiB - 1024) / (entry.utf8.count + 1)).joined(separator: ",")
        let chunk = Data(#"{"version":1,"command":"submit","submission":{"token":"t","final":false,"reuse":false,"checksum":false,"entries":[\#(entries)]}}"#.utf8 + [10])
        XCTAssertLessThan(chunk.count, MiB)
        let attackers = try (0..<3).map { _ in try UnixSocketConnection(path: daemon.socketPath, timeout: 10) }
        var refused = 0
        for round in 0..<300 {
            let attacker = attackers[round % attackers.count]
            XCTAssertEqual(attacker.send(chunk), chunk.count)
            guard case .line(let answer) = attacker.readReply() else { return XCTFail("no answer to chunk \(round)") }
            if answer.contains("too_large") { refused += 1 }
            let resident = daemon.residentMiB ?? 0
            guard resident < Self.maxResidentMiB else {
                return XCTFail("after \(round + 1) chunks the daemon holds \(resident) MiB")
            }
        }
        XCTAssertGreaterThan(refused, 0, "chunks past the bound were refused")
        guard assertOwnerServed("with the most manifest chunks staged that the daemon keeps") else { return }

        for attacker in attackers { attacker.closeConnection() }
        var resident = Int.max
        XCTAssertTrue(poll(timeout: 15, interval: 0.2) {
            resident = daemon.residentMiB ?? Int.max
            return resident < baseline + 64
        }, "the staged chunks' memory goes back to the system: \(resident) MiB, \(baseline) MiB at the start")
    }

    func testIdleConnectionsBeyondTheFileLimitLeaveTheOwnerAndTransfersTheirDescriptors() throws {
        try restartDaemon(fileLimit: (256, 256))
        let count = min(1_100, try raiseOwnFileLimit() - 200)
        try XCTSkipIf(count < 400, "this test process may open only \(count + 200) files")
        let size = 2 * MiB
        let sha256 = try makeSource("big.bin", size: size)

        var idle = try (0..<count).map { _ in try UnixSocketConnection(path: daemon.socketPath, timeout: 5) }
        guard assertOwnerServed("with \(count) idle connections and 256 descriptors") else { return }
        XCTAssertLessThan(daemon.openDescriptors ?? 0, 256 - 64, "descriptors are kept for the store and transfers")

        let id = try cli.download(nginx.url(.slow, "big.bin"), to: destination("big.bin"))
        idle += try (0..<200).map { _ in try UnixSocketConnection(path: daemon.socketPath, timeout: 5) }
        assertOwnerServed("while a download runs and clients keep connecting")
        try waitCompleted(id, timeout: 30)
        try assertCompletedDownload(id, at: destination("big.bin"), sha256: sha256, size: size)
        XCTAssertEqual(try cli.job(id).attempts, 1, "the download never waited for a descriptor")
        withExtendedLifetime(idle) {}
    }

    func testConnectionsThatAllWaitStillLeaveRoomForTheOwner() throws {
        try restartDaemon(fileLimit: (256, 256))
        let count = min(400, try raiseOwnFileLimit() - 200)
        let id = try cli.download(nginx.url(.files, "never"), to: destination("never"), ["--paused"])
        // Each connection has a request in progress (a wait for a paused job): none is idle.
        let waiting = try (0..<count).map { _ in
            try send(#"{"version":1,"command":"wait","ids":[\#(id)]}"#)
        }
        guard assertOwnerServed("with \(count) connections waiting and 256 descriptors") else { return }
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertLessThan(daemon.openDescriptors ?? 0, 256 - 64, "descriptors are kept for the store and transfers")
        withExtendedLifetime(waiting) {}
    }

    func testTheDaemonRaisesItsFileLimitToTheHardLimit() throws {
        try restartDaemon(fileLimit: (64, 4096))
        let limits = try XCTUnwrap(daemon.fileLimits)
        XCTAssertEqual(limits.soft, 4096, "soft limit raised to the hard one")
        XCTAssertTrue(daemon.logTail().contains("file descriptors: 4096; up to 256 control connections"), daemon.logTail())
    }

    func testAnAttemptShortOfDescriptorsWaitsAndRetriesInsteadOfFailing() throws {
        // 16 transfers at once need about 48 descriptors: a daemon allowed 40 runs out. Each
        // transfer takes 2 s (1 MiB at 512 KiB/s), so that they overlap even when a busy machine
        // spreads their starts out: at 0.5 s each, the first had ended before the last started
        // in a CI run, and no descriptor ran short.
        try restartDaemon(arguments: ["--max-active", "16", "--max-per-host", "16"], fileLimit: (40, 40))
        let size = 1 * MiB
        var lines: [String] = []
        var sums: [Int: String] = [:]
        for index in 0..<16 {
            sums[index] = try makeSource("f\(index)", size: size)
            lines.append(manifestLine(key: nil, download: ["url": nginx.url(.slow, "f\(index)"),
                                                           "output": destination("f\(index)").path]))
        }
        _ = try cli.submit(try cli.writeManifest(lines, to: workDir.appendingPathComponent("m.jsonl")))

        // The owner's connections may be refused while descriptors are short: ask until all ended.
        var jobs: [JobJSON] = []
        XCTAssertTrue(poll(timeout: 90, interval: 0.5) {
            jobs = (try? cli.jobs()) ?? jobs
            return jobs.count == 16 && jobs.allSatisfy { ["completed", "failed", "cancelled"].contains($0.state ?? "") }
        }, "every job ended: \(jobs.map { "\($0.id ?? 0): \($0.state ?? "?")" })")
        let failed = jobs.filter { $0.state != "completed" }
        XCTAssertEqual(failed.map(\.jsonText), [], "no job failed for want of a descriptor")
        var shortages = 0
        for job in jobs where job.state == "completed" {
            let id = try XCTUnwrap(job.id)
            let shown = try cli.job(id)
            shortages += shown.attemptLog.filter { ($0["error"] as? [String: Any])?["code"] as? String == "fd_shortage" }.count
            let name = URL(fileURLWithPath: shown["path"] as? String ?? "").lastPathComponent
            let index = try XCTUnwrap(Int(name.dropFirst()))
            try assertCompletedDownload(id, at: destination(name), sha256: sums[index] ?? "", size: size)
        }
        XCTAssertGreaterThan(shortages, 0, "descriptors did run short (else this test proves nothing)")
    }

    // MARK: helpers

    /// `stats` answers within a second, and the daemon holds less than `maxResidentMiB`.
    @discardableResult
    private func assertOwnerServed(_ context: String, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let started = Date()
        let stats = cli.run(["stats"], timeout: 5)
        let seconds = Date().timeIntervalSince(started)
        let resident = daemon.residentMiB ?? Int.max
        XCTAssertEqual(stats.exitCode, 0, "\(context): \(stats.summary)", file: file, line: line)
        XCTAssertLessThan(seconds, 1, "\(context): stats took \(seconds) s", file: file, line: line)
        XCTAssertLessThan(resident, Self.maxResidentMiB, "\(context): the daemon holds \(resident) MiB", file: file, line: line)
        return stats.exitCode == 0 && seconds < 1 && resident < Self.maxResidentMiB
    }

    /// A request line sent on a connection of its own (as much of it as the daemon takes).
    private func send(_ line: String) throws -> UnixSocketConnection {
        let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 10)
        connection.send(Data(line.utf8 + [10]))
        return connection
    }

    /// The next answer on `connection` (of at most 1 MiB), as JSON.
    private func answer(on connection: UnixSocketConnection) throws -> [String: Any] {
        guard case .line(let answer) = connection.readReply(),
              let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
        else { throw HarnessError("no JSON answer of at most 1 MiB") }
        return object
    }

    private func repeated(_ id: Int, _ count: Int) -> String {
        Array(repeating: String(id), count: count).joined(separator: ",")
    }

    /// `count` paused downloads queued as one manifest (no transfer starts).
    private func queuePausedJobs(_ count: Int) throws {
        let entries = (0..<count).map { manifestEntry(path: destination("paused\($0)").path, paused: true) }
        let submitted = try answer(on: try send(#"{"version":1,"command":"submit","submission":{"token":"p","final":true,"reuse":false,"checksum":false,"entries":[\#(entries.joined(separator: ","))]}}"#))
        XCTAssertEqual((submitted["submitted"] as? [String: Any]).flatMap { jsonInt($0["jobs"]) }, count, "\(submitted)")
    }

    /// A manifest entry of the control protocol's `submit` (a download of nothing that exists).
    private func manifestEntry(path: String, paused: Bool, header: String? = nil) -> String {
        let headers = header.map { #"["\#($0)"]"# } ?? "[]"
        return #"{"line":1,"job":{"kind":"download","url":"\#(nginx.url(.files, "none"))","path":"\#(path)","headers":\#(headers),"overwrite":false,"priority":"normal","paused":\#(paused)}}"#
    }

    /// Raises this process's soft limit on open files to the hard one; returns it.
    private func raiseOwnFileLimit() throws -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { throw HarnessError("getrlimit: errno \(errno)") }
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(resource, &limit) == 0 else { throw HarnessError("setrlimit: errno \(errno)") }
        return Int(clamping: limit.rlim_cur)
    }
}

/// Writes `data` on a connection from a thread of its own, in pieces, until all of it is sent
/// or `stop()`: a client that sends requests and never reads the answers.
// @unchecked: `sent` and `stopped` are guarded by `lock`; the connection is used by the thread only until `stop()` returns.
private final class Flood: @unchecked Sendable {
    private let connection: UnixSocketConnection
    private let lock = NSLock()
    private var sentBytes = 0
    private var stopped = false
    private var done = false
    private let finished = DispatchSemaphore(value: 0)

    init(_ connection: UnixSocketConnection, _ data: Data) {
        self.connection = connection
        Thread.detachNewThread { [self] in
            var offset = 0
            // A send returns early when the daemon does not take the bytes for a second.
            while offset < data.count, !lock.withLock({ stopped }) {
                let written = self.connection.send(data[offset..<min(offset + 4096, data.count)])
                offset += written
                lock.withLock { sentBytes = offset }
            }
            lock.withLock { done = true }
            finished.signal()
        }
    }

    var sent: Int { lock.withLock { sentBytes } }

    /// Until every byte is sent, or none went out for two seconds.
    func awaitBlockedOrDone() {
        var last = -1
        var since = Date()
        poll(timeout: 60, interval: 0.1) {
            let (sent, done) = lock.withLock { (sentBytes, self.done) }
            if sent != last { (last, since) = (sent, Date()) }
            return done || Date().timeIntervalSince(since) > 2
        }
    }

    func stop() {
        let wasStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        if !wasStopped { finished.wait() }
    }
}
