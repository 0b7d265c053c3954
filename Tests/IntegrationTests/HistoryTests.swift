import Foundation
import XCTest

/// History (issue 14 item 4): `prune` by state, by age and by batch, never an unfinished job;
/// a pruned job is gone everywhere ("no job N"), with every row that was its; a failed job the
/// daemon is about to retry is not pruned, and one being pruned is not retried;
/// `transferd --keep-history` prunes at start; the database stays sound.
final class HistoryTests: IntegrationTestCase {
    private var database: String { daemon.stateDir.appendingPathComponent("transfers.db").path }

    /// Runs SQL on the daemon's database with the sqlite3 command-line tool; its output lines.
    @discardableResult
    private func sqlite(_ sql: String) throws -> [String] {
        let result = cli.runner.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [database, ".timeout 5000", sql], timeout: 20)
        guard result.exitCode == 0 else { throw HarnessError("sqlite3: \(result.summary)") }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// Stops the daemon, moves the ends of `ids` `days` into the past, and starts it again
    /// (with `arguments`): the tests cannot wait a week, and the daemon's clock is the system's.
    private func age(_ ids: [Int], days: Int, restartingWith arguments: [String] = []) throws {
        daemon.stop()
        let list = ids.map(String.init).joined(separator: ",")
        try sqlite("UPDATE jobs SET finished_at = finished_at - \(days) * 86400000 WHERE id IN (\(list))")
        try restartDaemon(arguments: arguments)
    }

    /// A completed download (with a hook run), as the daemon leaves it.
    private func completed(_ name: String, _ options: [String] = []) throws -> Int {
        try makeSource(name, size: 16 * KiB)
        let id = try cli.download(nginx.url(.files, name), to: destination(name), options)
        try waitCompleted(id)
        return id
    }

    /// A download that failed for good (HTTP 404), with its resume data.
    private func failed(_ name: String) throws -> Int {
        let id = try cli.download(nginx.url(.files, "no-such-\(name)"), to: destination(name))
        try cli.awaitState(id, "failed")
        return id
    }

    private func prune(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> Int? {
        let result = cli.run(["prune", "--json"] + arguments)
        XCTAssertEqual(result.exitCode, 0, result.summary, file: file, line: line)
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(object.map { Set($0.keys) }, ["pruned"], result.summary, file: file, line: line)
        return jsonInt(object?["pruned"])
    }

    private func assertGone(_ id: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        for command in [["show", String(id)], ["retry", String(id)], ["wait", String(id)], ["resume-data", String(id)]] {
            let result = cli.run(command)
            XCTAssertEqual(result.exitCode, 1, "\(command): \(result.summary)", file: file, line: line)
            XCTAssertEqual(result.stderr, "transferctl: no job \(id)\n", "\(command)", file: file, line: line)
        }
        XCTAssertFalse(try cli.jobs().contains { $0.id == id }, "job \(id) is listed", file: file, line: line)
    }

    /// The daemon stopped: the file is sound, no row refers to a missing one, and no row of a
    /// pruned job is left.
    private func assertSoundDatabase(pruned: [Int], file: StaticString = #filePath, line: UInt = #line) throws {
        daemon.stop()
        XCTAssertEqual(try sqlite("PRAGMA integrity_check"), ["ok"], file: file, line: line)
        XCTAssertEqual(try sqlite("PRAGMA foreign_key_check"), [], file: file, line: line)
        let list = pruned.map(String.init).joined(separator: ",")
        for table in ["attempts", "resume_data", "upload_responses", "hook_runs", "pending_hooks"] {
            XCTAssertEqual(try sqlite("SELECT count(*) FROM \(table) WHERE job_id IN (\(list))"), ["0"], table,
                           file: file, line: line)
        }
        XCTAssertEqual(try sqlite("SELECT count(*) FROM jobs WHERE id IN (\(list))"), ["0"], file: file, line: line)
    }

    func testPruneByStateThenByAgeNeverTouchesAnUnfinishedJob() throws {
        let old = try completed("old.bin", ["--on-complete", "true"])
        let young = try completed("young.bin")
        let broken = try failed("broken.bin")
        let paused = try cli.download(nginx.url(.files, "old.bin"), to: destination("paused.bin"), ["--paused"])
        try cli.awaitJob(old, "its hook run recorded") { !($0["hookRuns"] as? [Any] ?? []).isEmpty }
        XCTAssertEqual(try sqlite("SELECT count(*) FROM resume_data WHERE job_id = \(broken)"), ["1"])

        // Unfinished states are refused before anything is asked, with the daemon's words.
        for state in ["queued", "running", "paused", "waiting", "completed,paused"] {
            let refused = cli.run(["prune", "--state", state])
            XCTAssertEqual(refused.exitCode, 2, refused.summary)
            XCTAssertTrue(refused.stderr.contains("prune deletes only ended jobs"), refused.summary)
        }
        let badAge = cli.run(["prune", "--older-than", "7"])
        XCTAssertEqual(badAge.exitCode, 2, badAge.summary)
        assertOneLineMessage(badAge.stderr, "prune --older-than 7")

        let human = cli.run(["prune", "--state", "failed"])
        XCTAssertEqual(human.exitCode, 0, human.summary)
        XCTAssertEqual(human.stdout, "pruned 1 job\n")
        try assertGone(broken)

        try age([old], days: 8)
        XCTAssertEqual(prune(["--older-than", "7d"]), 1)
        try assertGone(old)
        XCTAssertEqual(try cli.job(young).state, "completed")
        XCTAssertEqual(prune(["--older-than", "7d"]), 0)
        XCTAssertEqual(prune([]), 1, "any age: the young one too")
        try assertGone(young)
        XCTAssertEqual(try cli.jobs().map(\.id), [paused], "the paused job stays")
        XCTAssertEqual(cli.run(["resume", String(paused)]).exitCode, 0)
        try waitCompleted(paused)
        try assertSoundDatabase(pruned: [old, young, broken])
    }

    func testPruneOfABatchDeletesItOnceEmptyAndKeepsARunningBatchWhole() throws {
        try makeSource("b1.bin", size: 8 * KiB)
        try makeSource("b2.bin", size: 8 * KiB)
        let manifest = workDir.appendingPathComponent("m.jsonl")
        try cli.writeManifest(["b1.bin", "b2.bin"].map { name in
            manifestLine(key: name, download: ["url": nginx.url(.files, name), "output": destination(name).path])
        }, to: manifest)
        let ended = try XCTUnwrap(jsonInt(try cli.submit(manifest)["batch"]))
        XCTAssertEqual(cli.wait(batch: ended).exitCode, 0)
        let jobs = try cli.jobs(batch: ended).compactMap(\.id)

        let running = try cli.createBatch("still going")
        let done = try completed("r1.bin", ["--batch", String(running)])
        let open = try cli.download(nginx.url(.files, "b1.bin"), to: destination("r2.bin"), ["--batch", String(running), "--paused"])
        let loose = try completed("loose.bin")

        XCTAssertEqual(prune(["--batch", String(running)]), 0, "a batch with an unfinished job keeps every job")
        XCTAssertEqual(prune(["--batch", String(ended)]), 2)
        for id in jobs { try assertGone(id) }
        for command in [["batch", "show", String(ended)], ["wait", "--batch", String(ended)], ["list", "--batch", String(ended)]] {
            let result = cli.run(command)
            XCTAssertEqual(result.exitCode, 1, "\(command): \(result.summary)")
            XCTAssertEqual(result.stderr, "transferctl: no batch \(ended)\n", "\(command)")
        }
        XCTAssertEqual(try cli.batches().compactMap { jsonInt($0["id"]) }, [running])
        XCTAssertEqual(Set(try cli.jobs().compactMap(\.id)), [done, open, loose])
        let unknown = cli.run(["prune", "--batch", "999"])
        XCTAssertEqual(unknown.exitCode, 1, unknown.summary)
        XCTAssertEqual(unknown.stderr, "transferctl: no batch 999\n")

        // Once its last job has ended, the batch goes with its jobs.
        XCTAssertEqual(cli.run(["cancel", String(open)]).exitCode, 0)
        XCTAssertEqual(prune(["--batch", String(running)]), 2)
        XCTAssertEqual(try cli.batches().count, 0)
        XCTAssertEqual(try cli.jobs().compactMap(\.id), [loose])
        try assertSoundDatabase(pruned: jobs + [done, open])
    }

    /// Sends `requests` on one connection in one write (the daemon takes them in that order)
    /// and returns the answers by their `id`.
    private func send(_ requests: [String]) throws -> [Int: [String: Any]] {
        let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 20)
        defer { connection.closeConnection() }
        connection.send(Data(requests.map { $0 + "\n" }.joined().utf8))
        var buffer: [UInt8] = []
        var answers: [Int: [String: Any]] = [:]
        while answers.count < requests.count {
            let bytes = connection.receive()
            guard !bytes.isEmpty else { throw HarnessError("the daemon answered \(answers.count) of \(requests.count)") }
            buffer += bytes
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: line) as? [String: Any])
                answers[try XCTUnwrap(jsonInt(object["id"]))] = object
            }
        }
        return answers
    }

    /// A retry that reached the daemon first takes the failed job back in: the prune right
    /// behind it leaves it. A prune that reached it first has the job: the retry finds none.
    func testAFailedJobIsEitherRetriedOrPrunedNeverBoth() throws {
        let kept = try failed("kept.bin")
        // One state, so that the prune's first read is the one with the failed job.
        let prune = #"{"version":1,"id":2,"command":"prune","states":["failed"]}"#
        let first = try send([#"{"version":1,"id":1,"command":"retry","ids":[\#(kept)]}"#, prune])
        XCTAssertEqual(first[1]?["ok"] as? Bool, true, "\(first)")
        XCTAssertEqual(jsonInt(first[2]?["pruned"]), 0, "\(first)")
        XCTAssertEqual(cli.wait([kept]).exitCode, 1, "retried, and failed again")
        XCTAssertEqual(try cli.job(kept).attempts, 2)

        let gone = try failed("gone.bin")
        let second = try send([prune.replacingOccurrences(of: "\"id\":2", with: "\"id\":1"),
                               #"{"version":1,"id":2,"command":"retry","ids":[\#(gone)]}"#])
        XCTAssertEqual(jsonInt(second[1]?["pruned"]), 2, "\(second)")
        let refused = try XCTUnwrap(second[2]?["error"] as? [String: Any], "\(second)")
        XCTAssertEqual(refused["code"] as? String, "unknown_job")
        XCTAssertEqual(refused["message"] as? String, "no job \(gone)")
        try assertGone(gone)
        try assertGone(kept)
        XCTAssertEqual(try cli.jobs().count, 0)
        try assertSoundDatabase(pruned: [kept, gone])
    }

    func testKeepHistoryPrunesAtStartAndSaysSo() throws {
        let old = try completed("old.bin")
        let oldFailed = try failed("old-failed.bin")
        let young = try completed("young.bin")
        let refused = cli.runner.run(binaries.transferd, ["--keep-history", "forever"], timeout: 10)
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains("--keep-history needs an age like 7d"), refused.summary)

        try age([old, oldFailed], days: 31, restartingWith: ["--keep-history", "30d"])
        _ = try cli.awaitJSON("list", "the jobs older than 30 days pruned", timeout: 20, interval: 0.05,
                          fetch: { ["ids": try cli.jobs().compactMap(\.id)] }) { ($0["ids"] as? [Int]) == [young] }
        XCTAssertTrue(daemon.logTail().contains("pruned 2 jobs (--keep-history 30d)"), daemon.logTail())
        let events = cli.run(["events", "--type", "pruned"])
        XCTAssertTrue(events.stdout.contains("pruned 2 jobs (--keep-history 30d)"), events.summary)
        try assertGone(old)
        try assertGone(oldFailed)
        try assertSoundDatabase(pruned: [old, oldFailed])
    }
}
