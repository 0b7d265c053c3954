import Foundation
import XCTest

/// `transferctl events`: every state change of a job, in order; a subscriber that stops
/// reading does not hold transfers back.
final class EventTests: IntegrationTestCase {
    override class var slowRate: String { "1m" }

    func testFollowDeliversEveryStateChangeInOrder() throws {
        let output = workDir.appendingPathComponent("events.jsonl")
        let follower = try ChildProcess(executable: binaries.transferctl,
                                        arguments: ["--state-dir", daemon.stateDir.path, "events", "--follow", "--json"],
                                        stdoutURL: output, stderrURL: workDir.appendingPathComponent("events.err"))
        defer { follower.stop() }
        // The follower is subscribed once a marker event reaches it.
        XCTAssertEqual(cli.run(["limit", "--up", "100M"]).exitCode, 0)
        XCTAssertTrue(poll(timeout: 5) {
            Self.events(in: output).contains { $0["type"] as? String == "limit_changed" }
        }, "the follower sees the marker")
        let size = 2 * MiB
        let sha = try makeSource("events.bin", size: size)
        let dest = destination("events.bin")
        let id = try cli.download(nginx.url(.slow, "events.bin"), to: dest)
        try awaitProgress(id, atLeast: 256 * KiB, total: size)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)

        var events: [[String: Any]] = []
        XCTAssertTrue(poll(timeout: 5) {
            events = Self.events(in: output).filter { jsonInt($0["job"]) == id }
            return events.contains { $0["type"] as? String == "state" && $0["state"] as? String == "completed" }
        }, "the completion reached the follower: \(events)")
        for event in events {
            XCTAssertNotNil(event["time"] as? String, "every event has a time: \(event)")
        }
        let states = events.filter { $0["type"] as? String == "state" }
        let path = states.map { "\($0["from"] as? String ?? "?")>\($0["state"] as? String ?? "?")" }
        XCTAssertEqual(path, ["queued>running", "running>paused", "paused>queued", "queued>running", "running>completed"])
        let kinds = Set(events.compactMap { $0["type"] as? String })
        XCTAssertTrue(kinds.isSuperset(of: ["job_created", "attempt_started", "attempt_finished"]), "\(kinds)")
        XCTAssertFalse(kinds.contains("progress"), "progress events only when asked for: \(kinds)")
        let finished = events.filter { $0["type"] as? String == "attempt_finished" }
        XCTAssertNotNil(finished.last?["metrics"], "attempt_finished carries the timings: \(finished)")
    }

    /// `--job`, `--batch` and `--type` choose what a follower gets, filtered by the daemon.
    func testFollowFiltersByJobBatchAndType() throws {
        let batch = try XCTUnwrap(Int(cli.run(["batch", "create", "filtered"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        try makeSource("inbatch.bin", size: 2 * MiB)
        try makeSource("alone.bin", size: 64 * KiB)
        let inBatch = try cli.download(nginx.url(.slow, "inbatch.bin"), to: destination("inbatch.bin"),
                                       ["--paused", "--batch", String(batch)])
        let alone = try cli.download(nginx.url(.files, "alone.bin"), to: destination("alone.bin"), ["--paused"])
        func follow(_ name: String, _ arguments: [String]) throws -> (ChildProcess, URL) {
            let output = workDir.appendingPathComponent("\(name).jsonl")
            let follower = try ChildProcess(executable: binaries.transferctl,
                                            arguments: ["--state-dir", daemon.stateDir.path, "events", "--follow", "--json"] + arguments,
                                            stdoutURL: output, stderrURL: workDir.appendingPathComponent("\(name).err"))
            return (follower, output)
        }
        let (jobFollower, jobEvents) = try follow("job", ["--job", String(inBatch), "--type", "job_created,state", "--type", "progress"])
        defer { jobFollower.stop() }
        let (batchFollower, batchEvents) = try follow("batch", ["--batch", String(batch)])
        defer { batchFollower.stop() }
        // Subscribed once the recent events (the job's creation) have reached each follower.
        for output in [jobEvents, batchEvents] {
            XCTAssertTrue(poll(timeout: 5) {
                Self.events(in: output).contains { $0["type"] as? String == "job_created" && jsonInt($0["job"]) == inBatch }
            }, "the follower got the recent events: \(Self.events(in: output))")
        }
        XCTAssertEqual(cli.run(["resume", String(inBatch), String(alone)]).exitCode, 0)
        try waitCompleted(alone)
        try waitCompleted(inBatch)
        XCTAssertTrue(poll(timeout: 5) {
            Self.events(in: batchEvents).contains { $0["type"] as? String == "batch_ended" }
        }, "the batch's end reached its follower: \(Self.events(in: batchEvents))")

        let byJob = Self.events(in: jobEvents)
        XCTAssertEqual(Set(byJob.compactMap { jsonInt($0["job"]) }), [inBatch], "only the job asked for")
        XCTAssertEqual(Set(byJob.compactMap { $0["type"] as? String }), ["job_created", "state", "progress"],
                       "only the types asked for, progress included when named")
        let byBatch = Self.events(in: batchEvents)
        XCTAssertTrue(byBatch.allSatisfy { jsonInt($0["batch"]) == batch }, "every event carries the batch: \(byBatch)")
        XCTAssertFalse(byBatch.contains { jsonInt($0["job"]) == alone }, "not the other job's")
        XCTAssertFalse(byBatch.contains { $0["type"] as? String == "progress" }, "no progress unless asked for")
        XCTAssertTrue(byBatch.contains { $0["type"] as? String == "state" && $0["state"] as? String == "completed" }, "\(byBatch)")

        let unknown = cli.run(["events", "--type", "progres"])
        XCTAssertEqual(unknown.exitCode, 2, unknown.summary)
        XCTAssertTrue(unknown.stderr.contains("unknown event type 'progres'"), unknown.summary)
    }

    /// While it runs, a job's JSON carries its rate and the seconds left; once it has ended,
    /// when it started (with `finishedAt`: how long it took), and no rate.
    func testAJobShowsItsRateAndETAWhileRunningAndWhenItStarted() throws {
        let size = 3 * MiB
        try makeSource("timed.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "timed.bin"), to: destination("timed.bin"))
        var running = try cli.job(id)
        XCTAssertTrue(try poll(timeout: 10) {
            running = try cli.job(id)
            return jsonInt(running["rate"]) != nil && jsonInt(running["etaSeconds"]) != nil
        }, "rate and ETA while running: \(running.jsonText)")
        let rate = try XCTUnwrap(jsonInt(running["rate"]))
        XCTAssertTrue((256 * KiB...4 * MiB).contains(rate), "about the server's 1 MiB/s: \(running.jsonText)")
        let eta = try XCTUnwrap(jsonInt(running["etaSeconds"]))
        let left = size - (running.bytesDone ?? 0)
        XCTAssertEqual(Double(eta), Double(left) / Double(rate), accuracy: 1.5, running.jsonText)
        XCTAssertNotNil(running["startedAt"] as? String, running.jsonText)
        try waitCompleted(id)
        let done = try cli.job(id)
        XCTAssertTrue(done["rate"] is NSNull && done["etaSeconds"] is NSNull, "no rate once ended: \(done.jsonText)")
        let started = try XCTUnwrap((done["startedAt"] as? String).flatMap(ISO8601DateFormatter.withFractions.date), done.jsonText)
        let finished = try XCTUnwrap((done["finishedAt"] as? String).flatMap(ISO8601DateFormatter.withFractions.date), done.jsonText)
        XCTAssertEqual(finished.timeIntervalSince(started), 3, accuracy: 1.5, "3 MiB at 1 MiB/s: \(done.jsonText)")
    }

    func testASubscriberThatStopsReadingDoesNotSlowTransfers() throws {
        // Subscribe on a raw connection and never read from it again.
        let stalled = try UnixSocketConnection(path: daemon.socketPath, timeout: 5)
        defer { stalled.closeConnection() }
        XCTAssertGreaterThan(stalled.send(Data(#"{"version":1,"command":"events","follow":true}"#.utf8 + [10])), 0)
        var ids: [Int] = []
        for index in 0..<3 {
            let name = "busy\(index).bin"
            try makeSource(name, size: 4 * MiB)
            ids.append(try cli.download(nginx.url(.files, name), to: destination(name)))
        }
        for id in ids { try waitCompleted(id, timeout: 15) }
        XCTAssertEqual(cli.run(["stats"]).exitCode, 0, "the daemon keeps serving")
    }

    func testEventsWithoutFollowPrintsRecentEvents() throws {
        try makeSource("recent.bin", size: 64 * KiB)
        let id = try cli.download(nginx.url(.files, "recent.bin"), to: destination("recent.bin"))
        try waitCompleted(id)
        let human = cli.run(["events"])
        XCTAssertEqual(human.exitCode, 0, human.summary)
        XCTAssertTrue(human.stdout.contains("job \(id)") && human.stdout.contains("running -> completed"), human.stdout)
    }

    func testWatchFollowsAJobToItsEnd() throws {
        let size = 2 * MiB
        try makeSource("watched.bin", size: size)
        let id = try cli.download(nginx.url(.slow, "watched.bin"), to: destination("watched.bin"))
        let watched = cli.run(["watch", String(id)], timeout: 20)
        XCTAssertEqual(watched.exitCode, 0, watched.summary)
        let lines = watched.stdout.split(separator: "\n")
        XCTAssertGreaterThanOrEqual(lines.count, 4, "a frame a second while it ran, then the last one: \(watched.stdout)")
        let last = lines.suffix(2)
        XCTAssertTrue(last.first?.contains("watched.bin") == true && last.first?.contains("100.0%") == true
                      && last.first?.contains("completed") == true, watched.stdout)
        XCTAssertTrue(last.last?.hasPrefix("total: 1 job, 0 running, 1 ended") == true, watched.stdout)
        XCTAssertFalse(watched.stdout.contains("\u{1B}["), "no terminal codes when stdout is not a terminal")
        XCTAssertEqual(try cli.job(id).state, "completed")
    }

    private static func events(in file: URL) -> [[String: Any]] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

extension ISO8601DateFormatter {
    /// Reads the times the daemon writes (`2026-11-30T21:03:11.123Z`).
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
