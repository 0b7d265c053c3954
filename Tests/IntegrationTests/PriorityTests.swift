import Foundation
import XCTest

extension CLI {
    /// `events --json` (the recent events, progress excluded), one object a line.
    func recentEvents() throws -> [[String: Any]] {
        let result = run(["--json", "events"])
        guard result.exitCode == 0 else { throw HarnessError("events failed: \(result.summary)") }
        return result.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// Job ids in the order their `state` events took them from `queued` to `running`
    /// (a job started twice appears twice).
    func startOrder() throws -> [Int] {
        try recentEvents().filter {
            $0["type"] as? String == "state" && $0["state"] as? String == "running" && $0["from"] as? String == "queued"
        }.compactMap { jsonInt($0["job"]) }
    }
}

/// The largest number of jobs seen transferring while polling `list --json` until every job in
/// `ids` has ended. A running download whose bytes have all arrived (`bytesDone` ==
/// `bytesTotal`) is being synced and renamed, and holds no slot.
private func maxTransferring(_ cli: CLI, of ids: [Int], timeout: TimeInterval) throws -> (max: Int, samples: Int) {
    var highest = 0
    var samples = 0
    let wanted = Set(ids)
    let ended = try poll(timeout: timeout, interval: 0.02) {
        let jobs = try cli.jobs().filter { $0.id.map(wanted.contains) ?? false }
        samples += 1
        let transferring = jobs.filter { $0.state == "running" && ($0.bytesTotal == nil || $0.bytesDone != $0.bytesTotal) }
        highest = max(highest, transferring.count)
        return jobs.count == ids.count && jobs.allSatisfy { ["completed", "failed", "cancelled"].contains($0.state ?? "") }
    }
    guard ended else { throw HarnessError("jobs \(ids) did not end within \(timeout) s") }
    return (highest, samples)
}

/// Priorities with one slot (`--max-active 1`): the best queued job starts first, and a high
/// job takes a low job's slot; the low job continues later with a Range request.
final class PriorityTests: IntegrationTestCase {
    override class var slowRate: String { "512k" }
    override class var daemonArguments: [String] { ["--max-active", "1"] }

    func testHighJobPreemptsARunningLowJobWhichLaterResumesWithRange() throws {
        let lowSize = 2 * MiB
        let lowSHA = try makeSource("low.bin", size: lowSize)
        let highSHA = try makeSource("high.bin", size: 256 * KiB)
        let low = try cli.download(nginx.url(.slow, "low.bin"), to: destination("low.bin"), ["--priority", "low"])
        let seen = try awaitProgress(low, atLeast: 256 * KiB, total: lowSize).bytesDone ?? 0

        let high = try cli.download(nginx.url(.slow, "high.bin"), to: destination("high.bin"), ["--priority", "high"])
        // Follow the low job to its end: it is queued again meanwhile, and its bytesDone
        // never falls back to 0 (a checkpoint keeps what is on disk).
        var bytesSeen: [Int] = []
        var statesSeen: [String] = []
        try cli.awaitJob(low, "completed", timeout: 20) { job in
            if let done = job.bytesDone { bytesSeen.append(done) }
            if let state = job.state, statesSeen.last != state { statesSeen.append(state) }
            return job.state == "completed"
        }
        XCTAssertEqual(Array(statesSeen.drop { $0 == "running" }), ["queued", "running", "completed"],
                       "states of the low job: \(statesSeen)")
        XCTAssertGreaterThan(bytesSeen.min() ?? 0, 0, "bytesDone never went back to 0")
        try waitCompleted(high)
        try assertCompletedDownload(high, at: destination("high.bin"), sha256: highSHA, size: 256 * KiB)
        try assertCompletedDownload(low, at: destination("low.bin"), sha256: lowSHA, size: lowSize)

        // The record of it: a state event low running -> queued, preempted by the high job.
        let events = try cli.recentEvents().filter { jsonInt($0["job"]) == low && $0["type"] as? String == "state" }
        let preemption = events.first { $0["from"] as? String == "running" && $0["state"] as? String == "queued" }
        XCTAssertNotNil(preemption, "state events of the low job: \(events)")
        let reason = (preemption?["reason"] as? String ?? "").lowercased()
        XCTAssertTrue(reason.contains("preempted"), "reason: \(reason)")
        XCTAssertTrue(reason.contains(String(high)), "the reason names job \(high): \(reason)")
        XCTAssertEqual(try cli.startOrder().filter { [low, high].contains($0) }, [low, high, low], "start order")

        // Over HTTP: a second request for the low file with a Range, answered 206.
        let gets = nginx.awaitGets(.slow, "low.bin", count: 2)
        XCTAssertEqual(gets.count, 2, "log:\n\(nginx.describeLog())")
        if gets.count == 2 {
            XCTAssertEqual(gets[1].status, 206, "log:\n\(nginx.describeLog())")
            XCTAssertNotNil(gets[1].range)
            XCTAssertNotEqual(gets[1].range, "bytes=0-")
        }
        let last = try XCTUnwrap(try cli.job(low).attemptLog.last)
        XCTAssertGreaterThanOrEqual(jsonInt(last["rangeStart"]) ?? 0, seen, "continued from the kept bytes: \(last)")
    }

    func testStateReasonSaysPreemptedWhileQueued() throws {
        // The low job's bytes go through the slow location; the high one is held there long
        // enough (1 MiB at 512 KiB/s) to read the low job's state while it waits.
        try makeSource("low.bin", size: 2 * MiB)
        try makeSource("high.bin", size: 1 * MiB)
        let low = try cli.download(nginx.url(.slow, "low.bin"), to: destination("low.bin"), ["--priority", "low"])
        try awaitProgress(low, atLeast: 128 * KiB, total: 2 * MiB)
        let high = try cli.download(nginx.url(.slow, "high.bin"), to: destination("high.bin"), ["--priority", "high"])
        try cli.awaitState(high, "running", timeout: 5)
        let waiting = try cli.job(low)
        XCTAssertEqual(waiting.state, "queued", waiting.jsonText)
        XCTAssertTrue((waiting.stateReason ?? "").lowercased().contains("preempted"), waiting.jsonText)
        XCTAssertGreaterThan(waiting.bytesDone ?? 0, 0, "bytes kept while queued: \(waiting.jsonText)")
        XCTAssertEqual(cli.wait([low, high]).exitCode, 0)
    }

    func testQueuedJobsStartHighThenNormalThenLow() throws {
        try makeSource("blocker.bin", size: 8 * MiB)
        for name in ["l.bin", "n.bin", "h.bin"] { try makeSource(name, size: 16 * KiB) }
        let blocker = try cli.download(nginx.url(.slow, "blocker.bin"), to: destination("blocker.bin"))
        try cli.awaitState(blocker, "running", timeout: 5)
        // Queued oldest first: low, normal, high.
        let low = try cli.download(nginx.url(.files, "l.bin"), to: destination("l.bin"), ["--priority", "low"])
        let normal = try cli.download(nginx.url(.files, "n.bin"), to: destination("n.bin"))
        let high = try cli.download(nginx.url(.files, "h.bin"), to: destination("h.bin"), ["--priority", "high"])
        for id in [low, normal, high] { XCTAssertEqual(try cli.job(id).state, "queued", "one slot, taken by the blocker") }
        XCTAssertEqual(try cli.job(blocker).state, "running", "a normal job is not preempted by a high one")

        XCTAssertEqual(cli.run(["cancel", String(blocker)]).exitCode, 0)
        XCTAssertEqual(cli.wait([low, normal, high]).exitCode, 0)
        XCTAssertEqual(try cli.startOrder().filter { [low, normal, high].contains($0) }, [high, normal, low],
                       "start order (ids low \(low), normal \(normal), high \(high))")
        // The job records agree: each started after the one before it had finished.
        let attempts = try [high, normal, low].map { try XCTUnwrap(cli.job($0).attemptLog.first) }
        let starts = attempts.compactMap { $0["startedAt"] as? String }
        XCTAssertEqual(starts, starts.sorted(), "attempt start times: \(starts)")
    }

    /// A manifest's jobs are taken in together: its `high` line starts first wherever it is in
    /// the file, and no `low` job is started only to be preempted by it.
    func testAManifestsHighLineStartsFirstAndPreemptsNothing() throws {
        let names = ["low-1.bin", "low-2.bin", "high.bin"]
        for name in names { try makeSource(name, size: 16 * KiB) }
        let lines = names.map { name in
            manifestLine(key: name, download: ["url": nginx.url(.files, name), "output": destination(name).path,
                                               "priority": name.hasPrefix("low") ? "low" : "high"])
        }
        let manifest = try cli.writeManifest(lines, to: workDir.appendingPathComponent("mixed.jsonl"))
        let batch = try XCTUnwrap(jsonInt(try cli.submit(manifest)["batch"]))
        XCTAssertEqual(cli.run(["wait", "--batch", String(batch)], timeout: 30).exitCode, 0)
        let jobs = try cli.jobs(batch: batch)
        func idOf(_ key: String) throws -> Int { try XCTUnwrap(jobs.first { $0["key"] as? String == key }?.id) }
        let (low1, low2, high) = (try idOf("low-1.bin"), try idOf("low-2.bin"), try idOf("high.bin"))
        XCTAssertEqual(try cli.startOrder().filter { [low1, low2, high].contains($0) }, [high, low1, low2],
                       "each started once, the high one first (ids \(low1), \(low2), \(high))")
        for job in jobs { XCTAssertEqual(job.attempts, 1, "not preempted: \(job.jsonText)") }
    }
}

/// `--max-per-host 2 --max-active 8`: one host never has more than two transfers, other hosts
/// are not held back, and a high job preempts the most recently started low job of its host.
final class HostCapPriorityTests: IntegrationTestCase {
    override class var slowRate: String { "512k" }
    override class var daemonArguments: [String] { ["--max-per-host", "2", "--max-active", "8"] }

    func testAtMostTwoTransfersPerHost() throws {
        let other = try NginxServer(directory: workDir.appendingPathComponent("nginx-other"), slowRate: "512k")
        try other.start()
        defer { other.stop() }

        var ids: [Int] = []
        var shas: [Int: String] = [:]
        for i in 0..<5 {
            let sha = try makeSource("h\(i).bin", size: 512 * KiB)
            let id = try cli.download(nginx.url(.slow, "h\(i).bin"), to: destination("h\(i).bin"))
            ids.append(id)
            shas[id] = sha
        }
        // Another host's job starts at once, though five jobs of the first host are waiting.
        try Files.randomData(count: 512 * KiB).write(to: other.localPath("o.bin"))
        let otherID = try cli.download(other.url(.slow, "o.bin"), to: destination("o.bin"))
        try cli.awaitState(otherID, "running", timeout: 5)

        let (highest, samples) = try maxTransferring(cli, of: ids, timeout: 20)
        XCTAssertEqual(highest, 2, "most jobs of one host transferring at once, over \(samples) samples")
        XCTAssertGreaterThan(samples, 10, "sampled while the jobs ran")
        for (i, id) in ids.enumerated() {
            try assertCompletedDownload(id, at: destination("h\(i).bin"), sha256: shas[id]!, size: 512 * KiB)
        }
        try waitCompleted(otherID)
    }

    func testHighJobPreemptsTheMostRecentlyStartedLowJobOfItsHost() throws {
        let size = 2 * MiB
        let lowSHA = try makeSource("low1.bin", size: size)
        try FileManager.default.copyItem(at: nginx.localPath("low1.bin"), to: nginx.localPath("low2.bin"))
        let highSHA = try makeSource("high.bin", size: 256 * KiB)
        let first = try cli.download(nginx.url(.slow, "low1.bin"), to: destination("low1.bin"), ["--priority", "low"])
        try awaitProgress(first, atLeast: 64 * KiB, total: size)
        let second = try cli.download(nginx.url(.slow, "low2.bin"), to: destination("low2.bin"), ["--priority", "low"])
        try awaitProgress(second, atLeast: 64 * KiB, total: size)

        // The host is full (2 of 2); 6 global slots are free, but the cap is per host.
        let high = try cli.download(nginx.url(.slow, "high.bin"), to: destination("high.bin"), ["--priority", "high"])
        try waitCompleted(high)
        try assertCompletedDownload(high, at: destination("high.bin"), sha256: highSHA, size: 256 * KiB)
        XCTAssertEqual(cli.wait([first, second]).exitCode, 0)
        try assertCompletedDownload(first, at: destination("low1.bin"), sha256: lowSHA, size: size)
        try assertCompletedDownload(second, at: destination("low2.bin"), sha256: lowSHA, size: size)

        let stateEvents = try cli.recentEvents().filter { $0["type"] as? String == "state" }
        func preemptions(of id: Int) -> [[String: Any]] {
            stateEvents.filter {
                jsonInt($0["job"]) == id && $0["from"] as? String == "running" && $0["state"] as? String == "queued"
            }
        }
        XCTAssertEqual(preemptions(of: first).count, 0, "the older low job keeps its slot")
        XCTAssertEqual(preemptions(of: second).count, 1, "the newer low job gave its slot up: \(stateEvents)")
        XCTAssertTrue((preemptions(of: second).first?["reason"] as? String ?? "").contains("preempted"))

        XCTAssertEqual(nginx.awaitGets(.slow, "low1.bin", count: 1).count, 1, "log:\n\(nginx.describeLog())")
        let gets = nginx.awaitGets(.slow, "low2.bin", count: 2)
        XCTAssertEqual(gets.map(\.status), [200, 206], "the preempted job continued with a Range: \(nginx.describeLog())")
    }
}
