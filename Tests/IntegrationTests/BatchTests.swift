import Foundation
import XCTest

/// Batches: `batch submit` of JSON Lines manifests (all or nothing, keys make a resubmit
/// idempotent), `batch create` + `download --batch`, `batch show/list`, `list --batch`
/// paging, and pause/resume/cancel/wait over a batch.
final class BatchTests: IntegrationTestCase {
    override class var slowRate: String { "256k" }

    private func manifestURL(_ name: String = "jobs.jsonl") -> URL { workDir.appendingPathComponent(name) }

    private func batchID(_ result: [String: Any]) throws -> Int {
        try XCTUnwrap(jsonInt(result["batch"]), "submit --json has no batch id: \(result)")
    }

    /// Nothing at all is queued: no job, and no batch beyond `batchesBefore`.
    private func assertNothingQueued(batchesBefore: Int = 0, _ context: String,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        let jobs = try cli.jobs()
        XCTAssertEqual(jobs.count, 0, "\(context): no job may be queued: \(jobs.map(\.jsonText))", file: file, line: line)
        let batches = try cli.batches()
        XCTAssertEqual(batches.count, batchesBefore, "\(context): no batch may be created: \(batches.map(\.jsonText))",
                       file: file, line: line)
    }

    // MARK: good manifests

    func testManifestDownloadsCompleteWithTotalsAndWaitBatch() throws {
        let sizes = ["m1.bin": 300 * KiB + 1, "m2.bin": 1 * MiB, "m3.bin": 17]
        var shas: [String: String] = [:]
        for (name, size) in sizes { shas[name] = try makeSource(name, size: size) }
        let names = sizes.keys.sorted()
        var lines = names.map { name in
            manifestLine(key: name, download: ["url": nginx.url(.files, name), "output": destination(name).path,
                                               "sha256": shas[name]!])
        }
        lines.insert("", at: 1)  // blank lines are skipped
        try cli.writeManifest(lines, to: manifestURL())

        // Human output: the id alone on stdout, a summary on stderr.
        let human = cli.run(["batch", "submit", manifestURL().path, "--name", "nightly"])
        XCTAssertEqual(human.exitCode, 0, human.summary)
        let batch = try XCTUnwrap(Int(human.trimmedStdout), "stdout is the batch id: \(human.summary)")
        XCTAssertTrue(human.stderr.contains("3"), "the summary counts the jobs: \(human.summary)")

        let waited = cli.wait(batch: batch)
        XCTAssertEqual(waited.exitCode, 0, "wait --batch: \(waited.summary)")
        for name in names {
            XCTAssertEqual(try cli.sha256(of: destination(name)), shas[name], name)
        }
        let jobs = try cli.jobs(batch: batch)
        XCTAssertEqual(jobs.count, 3)
        for job in jobs {
            XCTAssertEqual(job.state, "completed", job.jsonText)
            XCTAssertEqual(jsonInt(job["batch"]), batch, job.jsonText)
            XCTAssertNotNil(job["key"] as? String, job.jsonText)
        }
        XCTAssertEqual(Set(jobs.compactMap { $0["key"] as? String }), Set(names))

        let total = sizes.values.reduce(0, +)
        let shown = try cli.batch(batch)
        XCTAssertEqual(jsonInt(shown["id"]), batch, shown.jsonText)
        XCTAssertEqual(shown["name"] as? String, "nightly", shown.jsonText)
        XCTAssertEqual(shown.state, "completed", shown.jsonText)
        XCTAssertEqual(shown.jobCount, 3, shown.jsonText)
        XCTAssertEqual(shown.jobCounts["completed"], 3, shown.jsonText)
        XCTAssertEqual(shown.jobCounts["failed"], 0, shown.jsonText)
        XCTAssertEqual(jsonInt(shown["bytesDone"]), total, shown.jsonText)
        XCTAssertEqual(jsonInt(shown["bytesTotal"]), total, shown.jsonText)
        XCTAssertEqual(jsonInt(shown["rate"]), 0, shown.jsonText)
        XCTAssertEqual(shown.hookRuns.count, 0, shown.jsonText)

        let listed = try cli.batches()
        XCTAssertEqual(listed.count, 1, listed.map(\.jsonText).description)
        XCTAssertEqual(listed.first.flatMap { jsonInt($0["id"]) }, batch)
        XCTAssertEqual(listed.first?.state, "completed")

        let shownText = cli.run(["batch", "show", String(batch)])
        XCTAssertEqual(shownText.exitCode, 0, shownText.summary)
        XCTAssertTrue(shownText.stdout.contains("nightly"), shownText.summary)
        let listText = cli.run(["batch", "list"])
        XCTAssertEqual(listText.exitCode, 0, listText.summary)
        XCTAssertTrue(listText.stdout.contains("nightly"), listText.summary)
    }

    /// docs/batches.md: `etaSeconds` (null when unknown), `onComplete`, `onFail`, `backup`
    /// ({directory, prefix} or null) are part of `batch list`/`batch show --json`.
    func testBatchJSONHasEveryDocumentedField() throws {
        let batch = try cli.createBatch("fields")
        let documented = ["id", "name", "state", "createdAt", "jobs", "jobCount", "bytesDone", "bytesTotal", "rate",
                          "etaSeconds", "onComplete", "onFail", "backup"]
        let shown = try cli.batch(batch)
        let listed = try XCTUnwrap(try cli.batches().first)
        for field in documented {
            XCTAssertTrue(shown.keys.contains(field), "batch show --json has \(field): \(shown.jsonText)")
            XCTAssertTrue(listed.keys.contains(field), "batch list --json has \(field): \(listed.jsonText)")
        }
        XCTAssertTrue(shown.keys.contains("hookRuns"), "batch show --json has hookRuns: \(shown.jsonText)")
        let jobs = shown.jobCounts
        XCTAssertEqual(Set(jobs.keys), ["queued", "running", "paused", "waiting", "completed", "failed", "cancelled"],
                       "every state present: \(shown.jsonText)")
    }

    func testSubmitJSONAndDefaultNameIsTheFileName() throws {
        try makeSource("j.bin", size: 10 * KiB)
        try cli.writeManifest([manifestLine(key: "j", download: ["url": nginx.url(.files, "j.bin"),
                                                                  "output": destination("j.bin").path,
                                                                  "priority": "low", "limitRate": "1M", "retry": 2,
                                                                  "headers": ["X-Test: 1"]])],
                              to: manifestURL("named.jsonl"))
        let result = try cli.submit(manifestURL("named.jsonl"))
        XCTAssertEqual(Set(result.keys), ["batch", "name", "jobs", "skipped"], "\(result)")
        XCTAssertEqual(result["name"] as? String, "named.jsonl", "\(result)")
        XCTAssertEqual(jsonInt(result["jobs"]), 1)
        XCTAssertEqual(jsonInt(result["skipped"]), 0)
        let batch = try batchID(result)
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        let job = try XCTUnwrap(try cli.jobs(batch: batch).first)
        XCTAssertEqual(job["priority"] as? String, "low", job.jsonText)
        XCTAssertEqual(jsonInt(job["limit"]), 1024 * 1024, job.jsonText)
        XCTAssertEqual(jsonInt(job["maxRetries"]), 2, job.jsonText)
        XCTAssertEqual(job["headers"] as? [String], ["X-Test: 1"], job.jsonText)
        // Human output counts in English: one job, not "1 jobs".
        try cli.writeManifest([manifestLine(key: "one", download: ["url": nginx.url(.files, "j.bin"),
                                                                    "output": destination("one.bin").path])],
                              to: manifestURL("one.jsonl"))
        let again = cli.run(["batch", "submit", manifestURL("one.jsonl").path, "--name", "again"])
        XCTAssertEqual(again.exitCode, 0, again.summary)
        XCTAssertTrue(again.stderr.contains("(again): 1 job queued"), again.stderr)
    }

    // MARK: bad manifests

    func testMalformedLinesAreReportedWithTheirNumberAndNothingIsQueued() throws {
        try makeSource("ok.bin", size: 1 * KiB)
        func good(_ key: String) -> String {
            manifestLine(key: key, download: ["url": nginx.url(.files, "ok.bin"), "output": destination(key).path])
        }
        let cases: [(what: String, lines: [String], badLine: Int)] = [
            ("bad JSON", [good("a"), #"{"key": "b", "download": {"url": "#], 2),
            ("not an object", [good("a"), good("b"), "[1, 2]"], 3),
            ("unknown top-level field", [good("a"), "",
                manifestLine(key: "c", download: ["url": nginx.url(.files, "ok.bin"), "output": destination("c").path])
                    .replacingOccurrences(of: #""key""#, with: #""colour":"red","key""#)], 3),
            ("unknown download field", [good("a"),
                manifestLine(key: "b", download: ["url": nginx.url(.files, "ok.bin"), "output": destination("b").path,
                                                  "sha265": String(repeating: "0", count: 64)])], 2),
            ("both download and upload", [good("a"), good("b"),
                #"{"key":"c","download":{"url":"http://127.0.0.1:1/x","output":"/tmp/x"},"upload":{"url":"http://127.0.0.1:1/u","file":"/etc/hostname"}}"#], 3),
            ("neither download nor upload", [#"{"key":"a"}"#, good("b")], 1),
            ("duplicate key", [good("a"), good("b"), good("c"), good("b")], 4),
            ("download without output", [good("a"), #"{"key":"b","download":{"url":"http://127.0.0.1:1/x"}}"#], 2),
            ("upload with both form and file", [good("a"),
                manifestLine(key: "u", upload: ["url": "http://127.0.0.1:1/u", "file": "/etc/hostname",
                                                "form": ["a=b"]])], 2),
        ]
        for (index, testCase) in cases.enumerated() {
            let file = try cli.writeManifest(testCase.lines, to: manifestURL("bad\(index).jsonl"))
            let result = cli.run(["batch", "submit", file.path])
            XCTAssertEqual(result.exitCode, 2, "\(testCase.what): \(result.summary)")
            XCTAssertTrue(result.stderr.contains("\(file.path):\(testCase.badLine)"),
                          "\(testCase.what): stderr names \(file.lastPathComponent):\(testCase.badLine): \(result.summary)")
            assertOneLineMessage(result.stderr, testCase.what)
            XCTAssertEqual(result.trimmedStdout, "", "\(testCase.what): no batch id printed: \(result.summary)")
            try assertNothingQueued(testCase.what)
        }
        // An unknown field is named, so a typo is easy to find.
        let typo = cli.run(["batch", "submit", manifestURL("bad3.jsonl").path])
        XCTAssertTrue(typo.stderr.contains("sha265"), typo.summary)
    }

    func testDaemonSideErrorNamesTheLineAndQueuesNothing() throws {
        try makeSource("ok.bin", size: 1 * KiB)
        let existing = destination("exists.bin")
        try Data("keep me".utf8).write(to: existing)
        func good(_ key: String) -> String {
            manifestLine(key: key, download: ["url": nginx.url(.files, "ok.bin"), "output": destination(key).path])
        }
        let cases: [(what: String, lines: [String], badLine: Int)] = [
            ("existing destination without overwrite", [good("a"), good("b"),
                manifestLine(key: "c", download: ["url": nginx.url(.files, "ok.bin"), "output": existing.path])], 3),
            ("missing upload file", [good("a"),
                manifestLine(key: "u", upload: ["url": nginx.davURL("u"), "file": workDir.appendingPathComponent("nope").path]),
                good("c")], 2),
            ("missing form file", [good("a"), good("b"),
                manifestLine(key: "u", upload: ["url": nginx.davURL("u"),
                                                "form": ["f=@" + workDir.appendingPathComponent("nope").path]])], 3),
            ("unsupported URL", [good("a"), good("b"), good("c"),
                manifestLine(key: "d", download: ["url": "ftp://127.0.0.1/x", "output": destination("d").path])], 4),
            ("not a URL", [good("a"),
                manifestLine(key: "d", download: ["url": "::not a url::", "output": destination("d").path])], 2),
            ("two lines with one output", [good("a"),
                manifestLine(key: "b", download: ["url": nginx.url(.files, "ok.bin"), "output": destination("a").path])], 2),
        ]
        for (index, testCase) in cases.enumerated() {
            let file = try cli.writeManifest(testCase.lines, to: manifestURL("daemon\(index).jsonl"))
            let result = cli.run(["batch", "submit", file.path])
            XCTAssertEqual(result.exitCode, 2, "\(testCase.what): \(result.summary)")
            let names = result.stderr.contains("\(file.path):\(testCase.badLine)")
                || result.stderr.contains("line \(testCase.badLine)")
            XCTAssertTrue(names, "\(testCase.what): stderr names line \(testCase.badLine): \(result.summary)")
            XCTAssertTrue(result.stderr.contains(file.path), "\(testCase.what): stderr names the file: \(result.summary)")
            assertOneLineMessage(result.stderr, testCase.what)
            try assertNothingQueued(testCase.what)
        }
        XCTAssertEqual(try String(contentsOf: existing, encoding: .utf8), "keep me")
        XCTAssertEqual(nginx.accessLogEntries().count, 0, "nothing was fetched: \(nginx.describeLog())")

        // Into an existing batch: the batch keeps exactly the jobs it had.
        let batch = try createBatchWithOneJob()
        let file = try cli.writeManifest([good("x"), good("y"),
            manifestLine(key: "z", download: ["url": nginx.url(.files, "ok.bin"), "output": existing.path])],
            to: manifestURL("into.jsonl"))
        let result = cli.run(["batch", "submit", file.path, "--batch", String(batch)])
        XCTAssertEqual(result.exitCode, 2, result.summary)
        XCTAssertEqual(try cli.jobs(batch: batch).count, 1, "the existing batch got nothing")
        XCTAssertEqual(try cli.jobs().count, 1, "no job anywhere else either")
        XCTAssertFalse(Files.exists(destination("x")))
    }

    /// A batch made with `batch create` holding one completed download.
    private func createBatchWithOneJob() throws -> Int {
        let batch = try cli.createBatch("existing")
        let id = try cli.download(nginx.url(.files, "ok.bin"), to: destination("first.bin"), ["--batch", String(batch)])
        try waitCompleted(id)
        return batch
    }

    /// Runs `transferctl --state-dir DIR ARGS...` through /bin/sh, in `directory`, with stdin from `input`.
    private func shell(_ arguments: [String], stdin input: URL? = nil, in directory: URL? = nil) -> CommandResult {
        func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        var script = ([cli.binaries.transferctl.path, "--state-dir", cli.stateDir.path] + arguments).map(quote).joined(separator: " ")
        if let input { script += " < " + quote(input.path) }
        if let directory { script = "cd \(quote(directory.path)) && " + script }
        return cli.runner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script], timeout: 60)
    }

    func testManifestFromStdinAndRelativeOutputs() throws {
        let sha = try makeSource("in.bin", size: 20 * KiB)
        // Relative outputs are taken from the directory transferctl runs in.
        let lines = [manifestLine(key: "rel", download: ["url": nginx.url(.files, "in.bin"), "output": "rel.bin"])]
        let manifest = try cli.writeManifest(lines, to: manifestURL())
        let result = shell(["batch", "submit", "-"], stdin: manifest, in: downloads)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let batch = try XCTUnwrap(Int(result.trimmedStdout), result.summary)
        XCTAssertEqual(try cli.batch(batch)["name"] as? String, "stdin")
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        XCTAssertEqual(try cli.sha256(of: destination("rel.bin")), sha)
        XCTAssertEqual(try cli.jobs(batch: batch).first?["path"] as? String, destination("rel.bin").path)

        // A bad line read from stdin is reported as stdin:LINE.
        let bad = try cli.writeManifest([lines[0].replacingOccurrences(of: "rel.bin", with: "other.bin"), "{"],
                                        to: manifestURL("bad.jsonl"))
        let refused = shell(["batch", "submit", "-"], stdin: bad, in: downloads)
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains("stdin:2"), refused.summary)
        XCTAssertEqual(try cli.jobs().count, 1)
    }

    /// A manifest larger than one control request (1 MiB) is sent in chunks; a daemon-side error
    /// on its last line still leaves nothing behind, and the corrected manifest is queued whole.
    func testLargeManifestIsAllOrNothingAcrossChunks() throws {
        let count = 5000
        let existing = destination("last.bin")
        try Data("already here".utf8).write(to: existing)
        let padding = "X-Padding: " + String(repeating: "p", count: 200)
        var lines = (0..<count).map { i in
            manifestLine(key: "k\(i)", download: ["url": nginx.url(.files, "never-\(i).bin"),
                                                  "output": destination("out-\(i).bin").path,
                                                  "paused": true, "headers": [padding]])
        }
        lines[count - 1] = manifestLine(key: "k\(count - 1)", download: ["url": nginx.url(.files, "never.bin"),
                                                                         "output": existing.path, "paused": true])
        let file = try cli.writeManifest(lines, to: manifestURL("large.jsonl"))
        XCTAssertGreaterThan(Files.size(file) ?? 0, 1 << 20, "test setup: more than one request line")

        let refused = cli.run(["batch", "submit", file.path], timeout: 60)
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains("line \(count)") || refused.stderr.contains("\(file.path):\(count)"),
                      refused.summary)
        try assertNothingQueued("error on the last line of a chunked manifest")

        lines[count - 1] = manifestLine(key: "k\(count - 1)", download: ["url": nginx.url(.files, "never.bin"),
                                                                         "output": existing.path, "paused": true,
                                                                         "overwrite": true])
        try cli.writeManifest(lines, to: file)
        let started = Date()
        let result = try cli.submit(file)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(jsonInt(result["jobs"]), count, "\(result)")
        let batch = try batchID(result)
        let shown = try cli.batch(batch)
        XCTAssertEqual(shown.jobCount, count, shown.jsonText)
        XCTAssertEqual(shown.jobCounts["paused"], count, shown.jsonText)
        XCTAssertEqual(shown.state, "paused", shown.jsonText)
        XCTAssertEqual(Set(try cli.jobs(batch: batch, limit: count + 10).compactMap { $0["key"] as? String }).count, count)
        XCTAssertLessThan(elapsed, 15, "5,000 lines queued in \(elapsed) s")
        XCTAssertEqual(cli.run(["cancel", "--batch", String(batch)], timeout: 60).exitCode, 0)
    }

    /// transferctl sends a chunk before it reads the next: a bad line read after chunks went to
    /// the daemon is still reported with its number, and what the daemon staged is dropped.
    func testABadLineAfterTheFirstChunksQueuesNothing() throws {
        let count = 1000
        var lines = (0..<count).map { i in
            manifestLine(key: "k\(i)", download: ["url": nginx.url(.files, "never-\(i).bin"),
                                                  "output": destination("out-\(i).bin").path, "paused": true])
        }
        let good = lines[700]
        lines[700] = "{\"download\": {"
        let file = try cli.writeManifest(lines, to: manifestURL("late.jsonl"))
        let refused = cli.run(["batch", "submit", file.path], timeout: 60)
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains("\(file.path):701: "), refused.summary)
        XCTAssertTrue(refused.stderr.contains("nothing was queued"), refused.summary)
        try assertNothingQueued("a bad line after the first chunks")

        lines[700] = good
        try cli.writeManifest(lines, to: file)
        let result = try cli.submit(file)
        XCTAssertEqual(jsonInt(result["jobs"]), count, "\(result)")
        XCTAssertEqual(try cli.jobs(batch: try batchID(result)).count, count)
        XCTAssertEqual(try cli.batches().count, 1)
    }

    // MARK: keys

    func testResubmittingTheSameManifestQueuesNothingNew() throws {
        var lines: [String] = []
        for i in 0..<4 {
            try makeSource("k\(i).bin", size: 64 * KiB + i)
            lines.append(manifestLine(key: "key-\(i)", download: ["url": nginx.url(.files, "k\(i).bin"),
                                                                   "output": destination("k\(i).bin").path]))
        }
        let file = try cli.writeManifest(lines, to: manifestURL())
        let first = try cli.submit(file, ["--name", "keyed"])
        let batch = try batchID(first)
        XCTAssertEqual(jsonInt(first["jobs"]), 4)
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        let getsAfterFirst = nginx.accessLogEntries().count

        let again = try cli.submit(file, ["--batch", String(batch)])
        XCTAssertEqual(jsonInt(again["batch"]), batch, "\(again)")
        XCTAssertEqual(jsonInt(again["jobs"]), 0, "nothing new: \(again)")
        XCTAssertEqual(jsonInt(again["skipped"]), 4, "every keyed line skipped: \(again)")

        let reused = try cli.submit(file, ["--name", "keyed", "--reuse"])
        XCTAssertEqual(jsonInt(reused["batch"]), batch, "--reuse finds the batch by name: \(reused)")
        XCTAssertEqual(jsonInt(reused["jobs"]), 0, "\(reused)")
        XCTAssertEqual(jsonInt(reused["skipped"]), 4, "\(reused)")

        XCTAssertEqual(try cli.jobs(batch: batch).count, 4)
        XCTAssertEqual(try cli.jobs().count, 4, "no job outside the batch either")
        XCTAssertEqual(try cli.batches().count, 1, "no new batch")
        XCTAssertEqual(nginx.accessLogEntries().count, getsAfterFirst, "nothing fetched again")

        // A manifest that grew: only the new line is queued.
        try makeSource("k4.bin", size: 1 * KiB)
        lines.append(manifestLine(key: "key-4", download: ["url": nginx.url(.files, "k4.bin"),
                                                            "output": destination("k4.bin").path]))
        try cli.writeManifest(lines, to: file)
        let grown = try cli.submit(file, ["--batch", String(batch)])
        XCTAssertEqual(jsonInt(grown["jobs"]), 1, "\(grown)")
        XCTAssertEqual(jsonInt(grown["skipped"]), 4, "\(grown)")
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        XCTAssertEqual(try cli.jobs(batch: batch).count, 5)

        // Without --batch/--reuse the same manifest is a new batch (and its outputs exist now).
        let fresh = cli.run(["batch", "submit", file.path])
        XCTAssertEqual(fresh.exitCode, 2, "outputs exist, no overwrite: \(fresh.summary)")
        XCTAssertEqual(try cli.batches().count, 1)
    }

    // MARK: batch create, --batch

    func testCreateBatchThenDownloadIntoIt() throws {
        let sha1 = try makeSource("c1.bin", size: 200 * KiB)
        let sha2 = try makeSource("c2.bin", size: 5 * KiB)
        let created = cli.run(["batch", "create", "manual"])
        XCTAssertEqual(created.exitCode, 0, created.summary)
        let batch = try XCTUnwrap(Int(created.trimmedStdout), created.summary)

        let empty = try cli.batch(batch)
        XCTAssertEqual(empty.state, "empty", empty.jsonText)
        XCTAssertEqual(empty["name"] as? String, "manual")
        XCTAssertEqual(empty.jobCount, 0)

        let id1 = try cli.download(nginx.url(.files, "c1.bin"), to: destination("c1.bin"), ["--batch", String(batch)])
        let id2 = try cli.download(nginx.url(.files, "c2.bin"), to: destination("c2.bin"), ["--batch", String(batch)])
        let outside = try cli.download(nginx.url(.files, "c2.bin"), to: destination("outside.bin"))
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        try assertCompletedDownload(id1, at: destination("c1.bin"), sha256: sha1, size: 200 * KiB)
        try assertCompletedDownload(id2, at: destination("c2.bin"), sha256: sha2, size: 5 * KiB)
        XCTAssertEqual(Set(try cli.jobs(batch: batch).compactMap(\.id)), [id1, id2])
        XCTAssertEqual(jsonInt(try cli.job(id1)["batch"]), batch)
        XCTAssertNil(jsonInt(try cli.job(outside)["batch"]))
        let shown = try cli.batch(batch)
        XCTAssertEqual(shown.state, "completed", shown.jsonText)
        XCTAssertEqual(shown.jobCount, 2, shown.jsonText)
        XCTAssertEqual(jsonInt(shown["bytesDone"]), 205 * KiB, shown.jsonText)
        try waitCompleted(outside)
    }

    func testUnknownBatchIsRefused() throws {
        try makeSource("u.bin", size: 1 * KiB)
        let download = cli.run(["download", nginx.url(.files, "u.bin"), "-o", destination("u.bin").path, "--batch", "999"])
        XCTAssertEqual(download.exitCode, 1, download.summary)
        assertOneLineMessage(download.stderr, "download --batch 999")
        XCTAssertTrue(download.stderr.contains("999"), download.summary)

        let show = cli.run(["batch", "show", "999"])
        XCTAssertEqual(show.exitCode, 1, show.summary)

        let file = try cli.writeManifest([manifestLine(key: "a", download: ["url": nginx.url(.files, "u.bin"),
                                                                            "output": destination("a").path])],
                                         to: manifestURL())
        let submit = cli.run(["batch", "submit", file.path, "--batch", "999"])
        XCTAssertEqual(submit.exitCode, 1, submit.summary)
        let wait = cli.run(["wait", "--batch", "999", "--timeout", "5"])
        XCTAssertEqual(wait.exitCode, 1, "wait --batch 999 (unknown_batch): \(wait.summary)")
        for verb in ["pause", "resume", "cancel", "retry"] {
            let result = cli.run([verb, "--batch", "999"])
            XCTAssertEqual(result.exitCode, 1, "\(verb) --batch 999 (unknown_batch): \(result.summary)")
            assertOneLineMessage(result.stderr, "\(verb) --batch 999")
        }
        try assertNothingQueued("unknown batch")
    }

    /// `transferctl --help` lists every command, the new ones included.
    func testTopLevelHelpListsBatchAndBackup() throws {
        let help = cli.run(["--help"])
        XCTAssertEqual(help.exitCode, 0, help.summary)
        let commands = help.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for command in ["batch", "backup"] {
            XCTAssertTrue(commands.contains { $0.hasPrefix(command + " ") }, "--help lists '\(command)':\n\(help.stdout)")
        }
    }

    // MARK: list paging

    func testListPagesOfABatchAreDisjointAndCoverIt() throws {
        try makeSource("p.bin", size: 1 * KiB)
        let before = try cli.download(nginx.url(.files, "p.bin"), to: destination("before.bin"), ["--paused"])
        let lines = (0..<7).map { i in
            manifestLine(key: "p\(i)", download: ["url": nginx.url(.files, "p.bin"), "output": destination("p\(i)").path,
                                                  "paused": true])
        }
        let batch = try batchID(try cli.submit(try cli.writeManifest(lines, to: manifestURL())))
        let after = try cli.download(nginx.url(.files, "p.bin"), to: destination("after.bin"), ["--paused"])
        let all = try cli.jobs(batch: batch).compactMap(\.id)
        XCTAssertEqual(all.count, 7)
        XCTAssertEqual(all, all.sorted(by: >), "newest first")
        XCTAssertFalse(all.contains(before) || all.contains(after))

        var pages: [[Int]] = []
        var cursor: Int?
        for _ in 0..<5 {
            var arguments = ["list", "--batch", String(batch), "--limit", "3"]
            if let cursor { arguments += ["--before", String(cursor)] }
            guard let page = try cli.json(arguments) as? [JobJSON] else { throw HarnessError("list --json: not an array") }
            let ids = page.compactMap(\.id)
            if ids.isEmpty { break }
            pages.append(ids)
            cursor = ids.last
        }
        XCTAssertEqual(pages.map(\.count), [3, 3, 1], "pages: \(pages)")
        XCTAssertEqual(pages.flatMap { $0 }, all, "pages are disjoint, newest first, and cover the batch: \(pages)")

        // Without --batch the same paging covers every job.
        let firstPage = try XCTUnwrap(try cli.json(["list", "--limit", "2"]) as? [JobJSON]).compactMap(\.id)
        XCTAssertEqual(firstPage, [after, all[0]])
        let tail = try XCTUnwrap(try cli.json(["list", "--before", String(all.last!)]) as? [JobJSON]).compactMap(\.id)
        XCTAssertEqual(tail, [before])
    }

    // MARK: pause / resume / cancel / wait --batch

    func testPauseResumeCancelAndWaitOnABatch() throws {
        let size = 4 * MiB
        for i in 0..<3 { try makeSource("s\(i).bin", size: size) }
        let lines = (0..<3).map { i in
            manifestLine(key: "s\(i)", download: ["url": nginx.url(.slow, "s\(i).bin"), "output": destination("s\(i).bin").path])
        }
        let batch = try batchID(try cli.submit(try cli.writeManifest(lines, to: manifestURL())))
        let outside = try cli.download(nginx.url(.slow, "s0.bin"), to: destination("outside.bin"))
        let ids = try cli.jobs(batch: batch).compactMap(\.id)
        XCTAssertEqual(ids.count, 3)

        try cli.awaitBatch(batch, "all three running") { $0.jobCounts["running"] == 3 }
        XCTAssertEqual(try cli.batch(batch).state, "running")

        let pause = cli.run(["pause", "--batch", String(batch)])
        XCTAssertEqual(pause.exitCode, 0, pause.summary)
        let paused = try cli.awaitBatch(batch, "all paused", timeout: 5) { $0.jobCounts["paused"] == 3 }
        XCTAssertEqual(paused.state, "paused", paused.jsonText)
        XCTAssertEqual(try cli.job(outside).state, "running", "a job outside the batch is not paused")
        let kept = ids.map { (try? cli.job($0).bytesDone) ?? nil }

        let resume = cli.run(["resume", "--batch", String(batch)])
        XCTAssertEqual(resume.exitCode, 0, resume.summary)
        try cli.awaitBatch(batch, "running again") { $0.jobCounts["running"] == 3 }
        for (id, keptBytes) in zip(ids, kept) {
            let job = try cli.job(id)
            XCTAssertGreaterThanOrEqual(job.bytesDone ?? -1, keptBytes ?? 0, "resume kept the bytes: \(job.jsonText)")
        }

        // wait --batch ends with 124 while they run.
        let timedOut = cli.wait(batch: batch, timeout: 1)
        XCTAssertEqual(timedOut.exitCode, 124, timedOut.summary)

        let cancel = cli.run(["cancel", "--batch", String(batch)])
        XCTAssertEqual(cancel.exitCode, 0, cancel.summary)
        let cancelled = try cli.awaitBatch(batch, "all cancelled", timeout: 5) { $0.jobCounts["cancelled"] == 3 }
        XCTAssertEqual(cancelled.state, "cancelled", cancelled.jsonText)
        let waited = cli.wait(batch: batch, timeout: 5)
        XCTAssertEqual(waited.exitCode, 1, "wait --batch with cancelled jobs: \(waited.summary)")
        XCTAssertEqual(try cli.job(outside).state, "running", "a job outside the batch is not cancelled")
        for i in 0..<3 { XCTAssertFalse(Files.exists(destination("s\(i).bin"))) }
        XCTAssertEqual(cli.run(["cancel", String(outside)]).exitCode, 0)
    }

    /// `batch submit --wait`: the batch id, then how each job ended, from one process whose
    /// exit status is `wait`'s: 0 once every file is in place, 1 when a job failed.
    func testSubmitWaitReturnsOnceTheBatchHasEndedWithWaitsStatus() throws {
        let sha = try makeSource("w.bin", size: 300 * KiB)
        try cli.writeManifest([manifestLine(key: "w", download: ["url": nginx.url(.slow, "w.bin"),
                                                                  "output": destination("w.bin").path])],
                              to: manifestURL("good.jsonl"))
        let good = cli.run(["batch", "submit", "--wait", manifestURL("good.jsonl").path])
        XCTAssertEqual(good.exitCode, 0, good.summary)
        let printed = good.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(printed.count, 2, good.summary)
        let batch = try XCTUnwrap(Int(printed[0]), "the batch id first: \(good.summary)")
        XCTAssertTrue(printed[1].hasSuffix(" completed"), good.summary)
        XCTAssertEqual(try cli.sha256(of: destination("w.bin")), sha, "in place when the submit returned")
        XCTAssertEqual(try cli.batch(batch).state, "completed")

        try cli.writeManifest([manifestLine(key: "gone", download: ["url": nginx.statusURL(404),
                                                                     "output": destination("gone").path, "retry": 0])],
                              to: manifestURL("bad.jsonl"))
        let bad = cli.run(["batch", "submit", "--wait", "--json", manifestURL("bad.jsonl").path])
        XCTAssertEqual(bad.exitCode, 1, bad.summary)
        XCTAssertTrue(bad.stderr.contains("failed"), bad.summary)
        XCTAssertTrue(bad.stdout.contains(#""batch""#) && bad.stdout.contains(#""http_status""#),
                      "the batch object, then the jobs: \(bad.summary)")

        let misplaced = cli.run(["batch", "create", "x", "--wait"])
        XCTAssertEqual(misplaced.exitCode, 2, misplaced.summary)
        XCTAssertTrue(misplaced.stderr.contains("--wait goes with batch submit"), misplaced.summary)
    }

    func testWaitBatchExitsOneWhenAJobFails() throws {
        try makeSource("fine.bin", size: 2 * KiB)
        let lines = [
            manifestLine(key: "fine", download: ["url": nginx.url(.files, "fine.bin"), "output": destination("fine").path]),
            manifestLine(key: "gone", download: ["url": nginx.statusURL(404), "output": destination("gone").path, "retry": 0]),
        ]
        let batch = try batchID(try cli.submit(try cli.writeManifest(lines, to: manifestURL())))
        let waited = cli.wait(batch: batch)
        XCTAssertEqual(waited.exitCode, 1, waited.summary)
        let printed = waited.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(printed.count, 2, waited.summary)
        XCTAssertTrue(printed.contains { $0.hasSuffix(" completed") }, waited.summary)
        XCTAssertTrue(printed.contains { $0.contains(" failed: http_status: ") }, waited.summary)

        // What the text output is made of: how each job ended, and nothing more of it.
        let connection = try UnixSocketConnection(path: daemon.socketPath, timeout: 10)
        defer { connection.closeConnection() }
        connection.send(Data(#"{"version":1,"command":"wait","batch":\#(batch),"brief":true}"#.utf8 + [10]))
        guard case .line(let line) = connection.readReply(),
              let answer = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { return XCTFail("no answer to a brief wait") }
        XCTAssertNil(answer["jobs"], line)
        let outcomes = try XCTUnwrap(answer["outcomes"] as? [[String: Any]], line)
        XCTAssertEqual(outcomes.map { Set($0.keys) }.sorted { $0.count < $1.count },
                       [["id", "state"], ["id", "state", "error"]], line)
        let failed = try XCTUnwrap(outcomes.first { $0["state"] as? String == "failed" }, line)
        XCTAssertEqual((failed["error"] as? [String: Any])?["code"] as? String, "http_status", line)
        let completedID = try XCTUnwrap(outcomes.first { $0["state"] as? String == "completed" }?["id"] as? Int, line)

        // With `ranges` (what transferctl asks for): the completed jobs as id ranges, the others
        // as outcomes.
        connection.send(Data(#"{"version":1,"command":"wait","batch":\#(batch),"brief":true,"ranges":true}"#.utf8 + [10]))
        guard case .line(let ranged) = connection.readReply(),
              let rangedAnswer = try JSONSerialization.jsonObject(with: Data(ranged.utf8)) as? [String: Any]
        else { return XCTFail("no answer to a brief wait with ranges") }
        XCTAssertEqual(rangedAnswer["completed"] as? [[Int]], [[completedID, completedID]], ranged)
        let others = try XCTUnwrap(rangedAnswer["outcomes"] as? [[String: Any]], ranged)
        XCTAssertEqual(others.map { $0["state"] as? String }, ["failed"], ranged)
        let shown = try cli.batch(batch)
        XCTAssertEqual(shown.state, "failed", shown.jsonText)
        XCTAssertEqual(shown.jobCounts["completed"], 1, shown.jsonText)
        XCTAssertEqual(shown.jobCounts["failed"], 1, shown.jsonText)
    }
}
