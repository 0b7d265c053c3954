import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--on-complete` / `--on-fail` hooks of jobs and batches: run with /bin/sh and the
/// documented environment, recorded in `show --json` / `batch show --json` (`hookRuns`),
/// killed after `--hook-timeout`. Each hook here writes what it saw into `hooks/`.
final class HookTests: IntegrationTestCase {
    override class var daemonArguments: [String] { ["--hook-timeout", "1"] }

    private var hookDir: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        hookDir = workDir.appendingPathComponent("hooks")
        try FileManager.default.createDirectory(at: hookDir, withIntermediateDirectories: true)
    }

    // MARK: helpers

    /// A hook command that saves its TRANSFERD_* environment as `hooks/<name>` (written to a
    /// temporary file first, so the file appears whole). `name` may use shell variables.
    private func envHook(_ name: String) -> String {
        let target = "\(hookDir.path)/\(name)"
        return "env | grep '^TRANSFERD_' > \"\(target).tmp.$$\" && mv \"\(target).tmp.$$\" \"\(target)\""
    }

    /// Waits for `hooks/<name>` and parses it as KEY=VALUE lines.
    private func awaitEnvironment(_ name: String, timeout: TimeInterval = 10) throws -> [String: String] {
        let url = hookDir.appendingPathComponent(name)
        guard poll(timeout: timeout, { Files.exists(url) }) else {
            throw HarnessError("hook did not write \(url.path) within \(timeout) s; hooks/: \(Files.contents(of: hookDir))\n"
                + daemon.logTail(lines: 20))
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return environment
    }

    /// Polls `show ID --json` until it lists `count` hook runs.
    @discardableResult
    private func awaitHookRuns(job id: Int, count: Int = 1, timeout: TimeInterval = 10) throws -> [[String: Any]] {
        try cli.awaitJob(id, "\(count) hook run(s) recorded", timeout: timeout) { $0.hookRuns.count >= count }.hookRuns
    }

    /// Polls `batch show B --json` until it lists `count` hook runs.
    @discardableResult
    private func awaitHookRuns(batch id: Int, count: Int = 1, timeout: TimeInterval = 10) throws -> [[String: Any]] {
        try cli.awaitBatch(id, "\(count) hook run(s) recorded", timeout: timeout) { $0.hookRuns.count >= count }.hookRuns
    }

    private func result(_ run: [String: Any]) throws -> [String: Any] {
        try XCTUnwrap(run["result"] as? [String: Any], "hook run without result: \(run)")
    }

    /// `hook` events of a job or a batch.
    private func hookEvents(job: Int? = nil, batch: Int? = nil) throws -> [[String: Any]] {
        try cli.recentEvents().filter {
            $0["type"] as? String == "hook" && (job == nil || jsonInt($0["job"]) == job)
                && (batch == nil || jsonInt($0["batch"]) == batch && $0["job"] == nil)
        }
    }

    private func batchID(_ result: [String: Any]) throws -> Int {
        try XCTUnwrap(jsonInt(result["batch"]), "no batch id: \(result)")
    }

    // MARK: job hooks

    func testOnCompleteOfADownloadRunsWithTheJobEnvironmentAndIsRecorded() throws {
        let size = 100 * KiB + 5
        try makeSource("done.bin", size: size)
        let dest = destination("done.bin")
        let command = envHook("job-$TRANSFERD_JOB_ID")
        let id = try cli.download(nginx.url(.files, "done.bin"), to: dest,
                                  ["--on-complete", command, "--on-fail", envHook("wrong-$TRANSFERD_JOB_ID")])
        try waitCompleted(id)

        let env = try awaitEnvironment("job-\(id)")
        XCTAssertEqual(env["TRANSFERD_EVENT"], "complete")
        XCTAssertEqual(env["TRANSFERD_JOB_ID"], String(id))
        XCTAssertEqual(env["TRANSFERD_STATE"], "completed")
        XCTAssertEqual(env["TRANSFERD_KIND"], "download")
        XCTAssertEqual(env["TRANSFERD_PATH"], dest.path)
        XCTAssertEqual(env["TRANSFERD_URL"], nginx.url(.files, "done.bin"))
        XCTAssertEqual(env["TRANSFERD_BYTES"], String(size))
        XCTAssertEqual(env["TRANSFERD_HTTP_STATUS"], "200")
        XCTAssertNil(env["TRANSFERD_ERROR"], "no error for a completed job: \(env)")
        XCTAssertNil(env["TRANSFERD_BATCH_ID"], "not in a batch: \(env)")
        XCTAssertTrue(Files.isRegularFile(dest), "the file is in place when the hook runs")

        let runs = try awaitHookRuns(job: id)
        XCTAssertEqual(runs.count, 1, "\(runs)")
        let run = try XCTUnwrap(runs.first)
        XCTAssertEqual(run["event"] as? String, "complete")
        XCTAssertEqual(run["command"] as? String, command)
        XCTAssertNotNil(run["startedAt"] as? String, "\(run)")
        let outcome = try result(run)
        XCTAssertEqual(jsonInt(outcome["exitStatus"]), 0, "\(run)")
        XCTAssertEqual(outcome["timedOut"] as? Bool, false, "\(run)")
        XCTAssertNil(jsonInt(outcome["signal"]), "\(run)")
        XCTAssertNotNil(jsonInt(outcome["durationMilliseconds"]), "\(run)")
        XCTAssertFalse(Files.exists(hookDir.appendingPathComponent("wrong-\(id)")), "--on-fail did not run")
        XCTAssertEqual(try hookEvents(job: id).count, 1, "one hook event")
    }

    func testOnFailOfA404RunsWithTheError() throws {
        let dest = destination("missing.bin")
        let command = envHook("fail-$TRANSFERD_JOB_ID")
        let id = try cli.download(nginx.statusURL(404), to: dest,
                                  ["--retry", "0", "--on-fail", command, "--on-complete", envHook("wrong-$TRANSFERD_JOB_ID")])
        try cli.awaitState(id, "failed", timeout: 10)
        let env = try awaitEnvironment("fail-\(id)")
        XCTAssertEqual(env["TRANSFERD_EVENT"], "fail")
        XCTAssertEqual(env["TRANSFERD_JOB_ID"], String(id))
        XCTAssertEqual(env["TRANSFERD_STATE"], "failed")
        XCTAssertEqual(env["TRANSFERD_KIND"], "download")
        XCTAssertEqual(env["TRANSFERD_PATH"], dest.path)
        XCTAssertEqual(env["TRANSFERD_URL"], nginx.statusURL(404))
        XCTAssertEqual(env["TRANSFERD_HTTP_STATUS"], "404")
        let error = try XCTUnwrap(env["TRANSFERD_ERROR"], "TRANSFERD_ERROR is set: \(env)")
        XCTAssertTrue(error.contains("404"), "TRANSFERD_ERROR says why: \(error)")
        XCTAssertEqual(env["TRANSFERD_ERROR_CODE"], try cli.job(id).errorCode)

        let run = try XCTUnwrap(try awaitHookRuns(job: id).first)
        XCTAssertEqual(run["event"] as? String, "fail")
        XCTAssertEqual(run["command"] as? String, command)
        XCTAssertEqual(jsonInt(try result(run)["exitStatus"]), 0)
        XCTAssertFalse(Files.exists(hookDir.appendingPathComponent("wrong-\(id)")), "--on-complete did not run")
    }

    func testUploadAndManifestLineHooks() throws {
        let body = workDir.appendingPathComponent("body.bin")
        try Files.randomData(count: 30 * KiB).write(to: body)
        let upload = try cli.upload(nginx.davURL("up/body.bin"), ["-T", body.path, "--on-complete", envHook("upload")])
        try waitCompleted(upload)
        let env = try awaitEnvironment("upload")
        XCTAssertEqual(env["TRANSFERD_KIND"], "upload")
        XCTAssertEqual(env["TRANSFERD_PATH"], body.path, "the -T file")
        XCTAssertEqual(env["TRANSFERD_URL"], nginx.davURL("up/body.bin"))
        XCTAssertEqual(env["TRANSFERD_JOB_ID"], String(upload))
        XCTAssertEqual(try Data(contentsOf: nginx.davRoot.appendingPathComponent("up/body.bin")), try Data(contentsOf: body))

        // Manifest lines carry their own hooks, and the job's batch is in the environment.
        try makeSource("line.bin", size: 4 * KiB)
        let lines = [
            manifestLine(key: "d", download: ["url": nginx.url(.files, "line.bin"), "output": destination("line.bin").path,
                                              "onComplete": envHook("line-d")]),
            manifestLine(key: "u", upload: ["url": nginx.davURL("up/line.bin"), "file": body.path,
                                            "onComplete": envHook("line-u")]),
            manifestLine(key: "f", download: ["url": nginx.statusURL(404), "output": destination("line-f").path,
                                              "retry": 0, "onFail": envHook("line-f")]),
        ]
        let manifest = try cli.writeManifest(lines, to: workDir.appendingPathComponent("hooks.jsonl"))
        let batch = try batchID(try cli.submit(manifest))
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 1, "one line fails")
        for (name, event, kind) in [("line-d", "complete", "download"), ("line-u", "complete", "upload"), ("line-f", "fail", "download")] {
            let env = try awaitEnvironment(name)
            XCTAssertEqual(env["TRANSFERD_EVENT"], event, "\(name): \(env)")
            XCTAssertEqual(env["TRANSFERD_KIND"], kind, "\(name): \(env)")
            XCTAssertEqual(env["TRANSFERD_BATCH_ID"], String(batch), "\(name): \(env)")
        }
    }

    func testExitStatusAndOutputAreRecorded() throws {
        try makeSource("out.bin", size: 1 * KiB)
        let command = "echo to-stdout; echo to-stderr >&2; exit 7"
        let id = try cli.download(nginx.url(.files, "out.bin"), to: destination("out.bin"), ["--on-complete", command])
        try waitCompleted(id)
        let run = try XCTUnwrap(try awaitHookRuns(job: id).first)
        let outcome = try result(run)
        XCTAssertEqual(jsonInt(outcome["exitStatus"]), 7, "\(run)")
        XCTAssertEqual(outcome["timedOut"] as? Bool, false, "\(run)")
        XCTAssertNil(jsonInt(outcome["signal"]), "\(run)")
        XCTAssertNil(outcome["startError"] as? String, "\(run)")
        XCTAssertEqual(outcome["truncated"] as? Bool, false, "\(run)")
        let output = outcome["output"] as? String ?? ""
        XCTAssertTrue(output.contains("to-stdout") && output.contains("to-stderr"), "stdout and stderr kept: \(run)")
        XCTAssertEqual(try cli.job(id).state, "completed", "a failing hook does not change the job")
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("hook on-complete") && shown.stdout.contains("exit 7"),
                      "show lists the hook run: \(shown.stdout)")

        // More output than is kept: the first 64 KiB, marked truncated.
        let chatty = try cli.download(nginx.url(.files, "out.bin"), to: destination("chatty.bin"),
                                      ["--on-complete", "head -c 200000 /dev/zero | tr '\\0' a"])
        try waitCompleted(chatty)
        let big = try result(try XCTUnwrap(try awaitHookRuns(job: chatty).first))
        XCTAssertEqual(big["truncated"] as? Bool, true, "\(big.keys)")
        let kept = (big["output"] as? String ?? "").utf8.count
        XCTAssertGreaterThan(kept, 0)
        XCTAssertLessThanOrEqual(kept, 64 * KiB, "output kept: \(kept) bytes")
        XCTAssertEqual(jsonInt(big["exitStatus"]), 0)
    }

    func testSlowHookIsKilledAfterTheTimeoutAndTheDaemonKeepsServing() throws {
        let size = 8 * KiB
        try makeSource("slow-hook.bin", size: size)
        let pidFile = hookDir.appendingPathComponent("hook.pid")
        // The hook's shell leads its own process group; a background child shares it.
        let command = "echo $$ > \(pidFile.path); echo started; sleep 30 & sleep 30"
        let id = try cli.download(nginx.url(.files, "slow-hook.bin"), to: destination("slow-hook.bin"),
                                  ["--on-complete", command])
        try waitCompleted(id)
        XCTAssertTrue(poll(timeout: 5) { Files.exists(pidFile) }, "the hook started")

        // While the hook sleeps, the daemon still queues and completes jobs.
        let sha = try makeSource("meanwhile.bin", size: size)
        let other = try cli.download(nginx.url(.files, "meanwhile.bin"), to: destination("meanwhile.bin"))
        try waitCompleted(other, timeout: 10)
        try assertCompletedDownload(other, at: destination("meanwhile.bin"), sha256: sha, size: size)

        let run = try XCTUnwrap(try awaitHookRuns(job: id, timeout: 8).first)
        let outcome = try result(run)
        XCTAssertEqual(outcome["timedOut"] as? Bool, true, "\(run)")
        XCTAssertNil(jsonInt(outcome["exitStatus"]), "\(run)")
        XCTAssertEqual(jsonInt(outcome["signal"]), 9, "\(run)")
        let duration = jsonInt(outcome["durationMilliseconds"]) ?? -1
        XCTAssertGreaterThanOrEqual(duration, 900, "ran about --hook-timeout 1: \(run)")
        XCTAssertLessThan(duration, 5000, "killed soon after the timeout, not after sleep 30: \(run)")
        XCTAssertTrue((outcome["output"] as? String ?? "").contains("started"), "output before the kill kept: \(run)")

        // The whole process group is gone, the background sleep included.
        let text = try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let group = try XCTUnwrap(Int32(text), "pid file: \(text)")
        XCTAssertTrue(poll(timeout: 5) { Processes.living(inGroup: group).isEmpty },
                      "processes left in the hook's group: \(Processes.living(inGroup: group))")
        XCTAssertEqual(cli.run(["stats"]).exitCode, 0, "daemon still answers")
        XCTAssertTrue(daemon.isRunning)
    }

    /// A hook that was due (or running) when the daemon died runs again after the restart: it
    /// is recorded as due in the same transaction as the job's end.
    func testAHookDueWhenTheDaemonDiesRunsAfterTheRestart() throws {
        try makeSource("due.bin", size: 4 * KiB)
        let runs = hookDir.appendingPathComponent("runs")
        // The first run notes itself and stays busy (it is still running at the kill); a later
        // run notes itself and exits 0.
        let command = "echo run >> '\(runs.path)'; [ $(wc -l < '\(runs.path)') -ge 2 ] || exec sleep 5"
        let id = try cli.download(nginx.url(.files, "due.bin"), to: destination("due.bin"), ["--on-complete", command])
        guard poll(timeout: 10, { Files.exists(runs) }) else {
            throw HarnessError("the hook never started\n" + daemon.logTail(lines: 20))
        }
        daemon.kill9()
        try daemon.start()

        let recorded = try awaitHookRuns(job: id)
        XCTAssertEqual(recorded.count, 1, "only the run after the restart is recorded: \(recorded)")
        XCTAssertEqual(jsonInt(try result(recorded[0])["exitStatus"]), 0, "\(recorded)")
        XCTAssertEqual(try String(contentsOf: runs, encoding: .utf8), "run\nrun\n", "ran again once after the restart")
        // Another restart runs nothing more: the run is recorded and no longer due.
        try daemon.restart()
        try makeSource("marker.bin", size: 1 * KiB)
        let marker = try cli.download(nginx.url(.files, "marker.bin"), to: destination("marker.bin"),
                                      ["--on-complete", envHook("marker")])
        try awaitHookRuns(job: marker)
        XCTAssertEqual(try String(contentsOf: runs, encoding: .utf8), "run\nrun\n")
    }

    // MARK: batch hooks

    func testBatchOnCompleteRunsOnceAfterEveryJob() throws {
        var lines: [String] = []
        for i in 0..<4 {
            try makeSource("b\(i).bin", size: (i + 1) * 200 * KiB)
            lines.append(manifestLine(key: "b\(i)", download: ["url": nginx.url(.slow, "b\(i).bin"),
                                                               "output": destination("b\(i).bin").path]))
        }
        let log = hookDir.appendingPathComponent("batch.log")
        let command = "echo \"$TRANSFERD_EVENT $TRANSFERD_BATCH_ID $TRANSFERD_BATCH_NAME $TRANSFERD_STATE "
            + "$TRANSFERD_JOBS_COMPLETED $TRANSFERD_JOBS_FAILED $TRANSFERD_JOBS_CANCELLED "
            + "${TRANSFERD_JOB_ID:-nojob}\" >> \(log.path)"
        let manifest = try cli.writeManifest(lines, to: workDir.appendingPathComponent("batch.jsonl"))
        let batch = try batchID(try cli.submit(manifest, ["--name", "four", "--on-complete", command,
                                                          "--on-fail", "echo fail >> \(log.path)"]))
        let shownEarly = try cli.batch(batch)
        XCTAssertEqual(shownEarly["onComplete"] as? String, command, shownEarly.jsonText)
        XCTAssertFalse(Files.exists(log), "nothing ran before the jobs ended")

        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        let runs = try awaitHookRuns(batch: batch)
        let run = try XCTUnwrap(runs.first)
        XCTAssertEqual(run["event"] as? String, "complete")
        XCTAssertEqual(run["command"] as? String, command)
        XCTAssertEqual(jsonInt(try result(run)["exitStatus"]), 0, "\(run)")
        // Every job had ended when it ran.
        let started = try XCTUnwrap(run["startedAt"] as? String)
        for job in try cli.jobs(batch: batch) {
            XCTAssertLessThanOrEqual(job["finishedAt"] as? String ?? "~", started, "job ended before the batch hook: \(job.jsonText)")
        }

        // Resubmitting the same manifest into the batch queues nothing and must not end it again.
        XCTAssertEqual(jsonInt(try cli.submit(manifest, ["--batch", String(batch)])["jobs"]), 0)
        // A later job hook is a marker: anything the batch had queued ran before it.
        try makeSource("marker.bin", size: 1 * KiB)
        let marker = try cli.download(nginx.url(.files, "marker.bin"), to: destination("marker.bin"),
                                      ["--on-complete", envHook("marker")])
        try waitCompleted(marker)
        _ = try awaitEnvironment("marker")
        try awaitHookRuns(job: marker)

        let lines2 = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines2, ["complete \(batch) four completed 4 0 0 nojob"], "the batch hook ran exactly once")
        XCTAssertEqual(try cli.batch(batch).hookRuns.count, 1)
        XCTAssertEqual(try hookEvents(batch: batch).count, 1, "one hook event for the batch")
        let ended = try cli.recentEvents().filter { $0["type"] as? String == "batch_ended" && jsonInt($0["batch"]) == batch }
        XCTAssertEqual(ended.count, 1, "batch_ended once: \(ended)")
    }

    func testBatchOnFailRunsOnceWithTheCounts() throws {
        try makeSource("ok.bin", size: 2 * KiB)
        let lines = [
            manifestLine(key: "ok", download: ["url": nginx.url(.files, "ok.bin"), "output": destination("ok").path]),
            manifestLine(key: "bad", download: ["url": nginx.statusURL(404), "output": destination("bad").path, "retry": 0]),
            manifestLine(key: "bad2", download: ["url": nginx.statusURL(500), "output": destination("bad2").path, "retry": 0]),
        ]
        let manifest = try cli.writeManifest(lines, to: workDir.appendingPathComponent("fail.jsonl"))
        let batch = try batchID(try cli.submit(manifest, ["--on-fail", envHook("batch-fail"),
                                                          "--on-complete", envHook("batch-complete")]))
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 1)
        let env = try awaitEnvironment("batch-fail")
        XCTAssertEqual(env["TRANSFERD_EVENT"], "fail")
        XCTAssertEqual(env["TRANSFERD_BATCH_ID"], String(batch))
        XCTAssertEqual(env["TRANSFERD_BATCH_NAME"], "fail.jsonl")
        XCTAssertEqual(env["TRANSFERD_STATE"], "failed")
        XCTAssertEqual(env["TRANSFERD_JOBS_COMPLETED"], "1")
        XCTAssertEqual(env["TRANSFERD_JOBS_FAILED"], "2")
        XCTAssertEqual(env["TRANSFERD_JOBS_CANCELLED"], "0")
        XCTAssertNil(env["TRANSFERD_JOB_ID"], "a batch hook has no job: \(env)")
        let runs = try awaitHookRuns(batch: batch)
        XCTAssertEqual(runs.count, 1)
        XCTAssertEqual(runs.first?["event"] as? String, "fail")
        XCTAssertFalse(Files.exists(hookDir.appendingPathComponent("batch-complete")))
    }

    func testCreatedBatchHookRunsWhenItsJobsEnd() throws {
        let batch = try cli.createBatch("made", ["--on-complete", envHook("created-$TRANSFERD_BATCH_ID")])
        try makeSource("c.bin", size: 300 * KiB)
        let id = try cli.download(nginx.url(.slow, "c.bin"), to: destination("c.bin"), ["--batch", String(batch)])
        try waitCompleted(id)
        let env = try awaitEnvironment("created-\(batch)")
        XCTAssertEqual(env["TRANSFERD_STATE"], "completed", "ran when the job ended, not when the batch was created: \(env)")
        XCTAssertEqual(env["TRANSFERD_JOBS_COMPLETED"], "1", "\(env)")
        XCTAssertEqual(env["TRANSFERD_BATCH_NAME"], "made")
        XCTAssertEqual(try awaitHookRuns(batch: batch).count, 1)
    }

    func testBackupBatchHookHasTheDirectoryAndPrefix() throws {
        let tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Files.randomData(count: 5 * KiB).write(to: tree.appendingPathComponent("sub/a.bin"))
        try Files.randomData(count: 6 * KiB).write(to: tree.appendingPathComponent("b.bin"))
        let prefix = nginx.davURL("hooked")
        let first = try batchID(try cli.backup(tree, to: prefix, ["--on-complete", envHook("backup-$TRANSFERD_BATCH_ID")]))
        XCTAssertEqual(cli.wait(batch: first).exitCode, 0)
        let env = try awaitEnvironment("backup-\(first)")
        XCTAssertEqual(env["TRANSFERD_EVENT"], "complete")
        XCTAssertEqual(env["TRANSFERD_STATE"], "completed")
        XCTAssertEqual(env["TRANSFERD_PATH"], tree.path)
        XCTAssertEqual(env["TRANSFERD_URL"], prefix)
        XCTAssertEqual(env["TRANSFERD_JOBS_COMPLETED"], "2")

        // Nothing changed: an empty batch, whose on-complete still runs once (docs/batches.md).
        let second = try batchID(try cli.backup(tree, to: prefix, ["--on-complete", envHook("backup-$TRANSFERD_BATCH_ID")]))
        let envEmpty = try awaitEnvironment("backup-\(second)")
        XCTAssertEqual(envEmpty["TRANSFERD_STATE"], "empty")
        XCTAssertEqual(envEmpty["TRANSFERD_JOBS_COMPLETED"], "0")
        XCTAssertEqual(try awaitHookRuns(batch: second).count, 1)
    }
}

/// Processes by process group, from /proc (Linux).
enum Processes {
    /// Pids of the processes in `group` that are not zombies.
    static func living(inGroup group: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> Int32? in
            guard let pid = Int32(name),
                  let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "pid (comm)": state ppid pgrp ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", Int32(fields[2]) == group else { return nil }
            return pid
        }
    }
}
