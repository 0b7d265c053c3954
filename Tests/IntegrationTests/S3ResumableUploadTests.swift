import Foundation
import XCTest

/// `upload s3://BUCKET/KEY -T FILE` and `download s3://…` against a real S3-compatible server
/// (moto, signatures checked) through a relay the tests can cut: small files in one signed
/// PUT, larger ones as multipart uploads that continue from what S3 lists after any
/// interruption, so the server receives little more than the file (counted on its side:
/// UploadPart bodies as moto read them). Objects are read back with boto3.
final class S3ResumableUploadTests: S3TestCase {
    /// The engine's default part size, and parts in flight.
    let part = 8 * MiB
    let lanes = 4

    private func upload(_ file: URL, key: String, _ options: [String] = []) throws -> Int {
        try cli.upload("s3://\(s3.bucket)/\(key)", ["-T", file.path, "--s3-endpoint", s3.endpoint] + options)
    }

    private func assertObject(_ key: String, sha256: String, size: Int, line: UInt = #line) throws {
        let object = try XCTUnwrap(try s3.objectSHA256(key), "no object \(key)", line: line)
        XCTAssertEqual(object.size, Int64(size), line: line)
        XCTAssertEqual(object.sha256, sha256, "the object differs from the file", line: line)
    }

    func testASmallFileIsOneSignedPutAndReadsBackWhole() throws {
        let size = 3 * MiB + 5
        let (file, sha) = try makeLargeFile("small.bin", size: size)
        let id = try upload(file, key: "dir/small file é.bin")
        try waitCompleted(id)
        try assertObject("dir/small file é.bin", sha256: sha, size: size)
        let stats = try s3.stats()
        XCTAssertEqual(stats.requests(.putObject), 1)
        XCTAssertEqual(stats.putObjectBytes, Int64(size))
        XCTAssertEqual(stats.requests(.createMultipartUpload), 0)
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("S3, endpoint \(s3.endpoint)"), shown.stdout)
        // The same request with the real curl, signed with the caller's credentials.
        let line = cli.run(["show", String(id), "--curl"]).trimmedStdout
        XCTAssertTrue(line.contains("--aws-sigv4 aws:amz:us-east-1:s3"), line)
        XCTAssertFalse(line.contains(s3.secretKey), line)
        let again = cli.runner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", line.replacingOccurrences(of: "dir/small", with: "dir/again")],
                                   timeout: 30, environment: s3.environment)
        XCTAssertEqual(again.exitCode, 0, "\(line)\n\(again.summary)")
        try assertObject("dir/again file é.bin", sha256: sha, size: size)
    }

    /// The issue's measure: kill -9 at ~20 %, ~50 % and ~80 % of 1 GiB, restarted each time.
    func testKillNineAtThreePointsOfAGibibyteContinuesFromTheListedParts() throws {
        let size = 1024 * MiB
        let (file, sha) = try makeLargeFile("one-gib.bin", size: size)
        let id = try upload(file, key: "big/one-gib.bin")
        let shown = try interrupt(id, size: size, at: [0.2, 0.5, 0.8]) { _ in
            daemon.kill9()
            try restartDaemon()
        }
        try waitCompleted(id, timeout: 180)
        try assertObject("big/one-gib.bin", sha256: sha, size: size)
        let stats = try s3.stats()
        let extra = stats.uploadPartBytes - Int64(size)
        print("S3 kill -9 ×3 of 1 GiB at \(shown.map { "\($0 / MiB) MiB" }): the server received \(stats.uploadPartBytes) "
            + "UploadPart bytes, \(extra) beyond the file (\(stats.requests(.uploadPart)) parts sent, "
            + "\(stats.requests(.listParts)) ListParts, \(stats.requests(.createMultipartUpload)) Create)")
        XCTAssertEqual(stats.requests(.createMultipartUpload), 1, "the recorded upload was continued, never created again")
        XCTAssertGreaterThanOrEqual(stats.requests(.listParts), 3, "each restart asks S3 which parts it holds")
        // Four parts are in flight at a time (the default --parts-in-flight): a kill loses what
        // each had sent, never a part S3 acknowledged.
        XCTAssertLessThanOrEqual(extra, Int64(3 * lanes * part), "at most the parts in flight at each kill were sent twice")
        XCTAssertEqual(try s3.multipartUploads().count, 0, "no unfinished upload left")
    }

    func testPauseAndResumeContinueFromTheListedParts() throws {
        let size = 64 * MiB
        let (file, sha) = try makeLargeFile("paused.bin", size: size)
        let id = try upload(file, key: "paused.bin", ["--limit-rate", "32M"])
        try interrupt(id, size: size, at: [0.5]) { _ in
            XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
            _ = try cli.awaitState(id, "paused")
        }
        let paused = try cli.job(id)
        let upload = try XCTUnwrap(try s3.multipartUploads().first)
        let held = try s3.parts(key: upload.key, uploadID: upload.uploadID).reduce(Int64(0)) { $0 + $1.size }
        // What S3 acknowledged before the pause; a part whose answer the pause cut off S3 holds
        // too, and lists to the next attempt.
        let acknowledged = Int64(try XCTUnwrap(paused.bytesDone))
        XCTAssertTrue(acknowledged <= held && held - acknowledged <= Int64(lanes * part) && acknowledged > 0,
                      "a paused job shows the parts S3 acknowledged (\(held) bytes held): \(paused.jsonText)")
        let shown = cli.run(["show", String(id)])
        XCTAssertTrue(shown.stdout.contains("continues from byte \(acknowledged), as the server reports"), shown.stdout)
        let listedBefore = try s3.stats().requests(.listParts)  // (the test's own listing above)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 60)
        try assertObject("paused.bin", sha256: sha, size: size)
        let stats = try s3.stats()
        XCTAssertEqual(stats.requests(.listParts) - listedBefore, 1, "the resumed attempt asked S3 for its parts: \(stats)")
        XCTAssertLessThanOrEqual(stats.uploadPartBytes - Int64(size), Int64(lanes * part), "a pause sends at most the parts in flight twice")
    }

    func testTheServerGoingAwayMakesTheJobWaitThenContinue() throws {
        let size = 96 * MiB
        let (file, sha) = try makeLargeFile("offline.bin", size: size)
        let id = try upload(file, key: "offline.bin", ["--limit-rate", "32M"])
        try interrupt(id, size: size, at: [0.4]) { _ in try s3.cut() }
        let waiting = try cli.awaitJob(id, "waiting or queued for the server", timeout: 30) { ["waiting", "queued"].contains($0.state ?? "") }
        XCTAssertNotEqual(waiting.state, "failed", waiting.jsonText)
        try s3.restore()
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 90)
        try assertObject("offline.bin", sha256: sha, size: size)
        let stats = try s3.stats()
        XCTAssertEqual(stats.requests(.createMultipartUpload), 1, "the same upload continued: \(stats)")
        XCTAssertLessThanOrEqual(stats.uploadPartBytes - Int64(size), Int64(lanes * part), "\(stats)")
    }

    func testCancelAbortsTheUploadAndLeavesNoPartBehind() throws {
        let size = 64 * MiB
        let (file, _) = try makeLargeFile("cancelled.bin", size: size)
        let id = try upload(file, key: "cancelled.bin", ["--limit-rate", "16M"])
        try interrupt(id, size: size, at: [0.3]) { _ in
            XCTAssertEqual(cli.run(["cancel", String(id)]).exitCode, 0)
        }
        XCTAssertTrue(poll(timeout: 10) { (try? s3.multipartUploads())?.isEmpty == true },
                      "an upload is left: \(String(describing: try? s3.multipartUploads()))")
        XCTAssertEqual(try s3.stats().requests(.abortMultipartUpload), 1)
        XCTAssertNil(try s3.objectSHA256("cancelled.bin"))
    }

    func testAWrongSecretFailsAtOnceAsAuthAndIsNeverShown() throws {
        let wrong = "wrong-secret-\(UUID().uuidString)"
        var environment = s3.environment
        environment["AWS_SECRET_ACCESS_KEY"] = wrong
        try restartDaemon(environment: environment)
        let (file, _) = try makeLargeFile("refused.bin", size: 20 * MiB)
        let id = try upload(file, key: "refused.bin")
        let job = try cli.awaitState(id, "failed", timeout: 20)
        XCTAssertEqual(job.errorCode, "auth", job.jsonText)
        XCTAssertTrue((job.errorMessage ?? "").contains("SignatureDoesNotMatch"), job.jsonText)
        assertOneLineMessage(job.errorMessage ?? "", "error.message")
        XCTAssertEqual(job["attempts"] as? Int, 1, "not retried: \(job.jsonText)")
        var seen = [cli.run(["show", String(id)]).stdout, cli.run(["--json", "show", String(id)]).stdout,
                    cli.run(["list"]).stdout, cli.run(["events"]).stdout, daemon.logTail(lines: 400)]
        seen.append(String(decoding: (try? Data(contentsOf: daemon.stateDir.appendingPathComponent("transfers.db"))) ?? Data(), as: UTF8.self))
        for text in seen { XCTAssertFalse(text.contains(wrong), "the secret leaked: \(text.prefix(300))") }
        XCTAssertFalse(seen.joined().contains(s3.secretKey), "the right secret leaked too")
    }

    func testCredentialsFromTheSharedFileAndAProfile() throws {
        let home = workDir.appendingPathComponent("home")
        try s3.writeCredentialsFile(home: home)
        let credentials = home.appendingPathComponent(".aws/credentials")
        let text = try String(contentsOf: credentials, encoding: .utf8)
        try (text + "\n[backup]\n" + text.split(separator: "\n").dropFirst().joined(separator: "\n") + "\n")
            .write(to: credentials, atomically: true, encoding: .utf8)
        try restartDaemon(environment: ["HOME": home.path, "AWS_REGION": s3.region])
        let (file, sha) = try makeLargeFile("from-file.bin", size: 1 * MiB)
        let first = try upload(file, key: "profiles/default.bin")
        let second = try upload(file, key: "profiles/backup.bin", ["--profile", "backup"])
        let missing = try upload(file, key: "profiles/none.bin", ["--profile", "nosuch"])
        try waitCompleted(first)
        try waitCompleted(second)
        try assertObject("profiles/default.bin", sha256: sha, size: MiB)
        try assertObject("profiles/backup.bin", sha256: sha, size: MiB)
        let failed = try cli.awaitState(missing, "failed")
        XCTAssertEqual(failed.errorCode, "auth", failed.jsonText)
        XCTAssertTrue((failed.errorMessage ?? "").contains("nosuch"), failed.jsonText)
    }

    func testADownloadOfAnObjectResumesWithARange() throws {
        let size = 48 * MiB
        let (file, sha) = try makeLargeFile("object.bin", size: size)
        try s3.put("objects/object.bin", from: file)
        let dest = destination("object.bin")
        let id = try cli.download("s3://\(s3.bucket)/objects/object.bin", to: dest,
                                  ["--s3-endpoint", s3.endpoint, "--limit-rate", "16M"])
        try pauseAfterProgress(id, atLeast: 8 * MiB, total: size)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        XCTAssertEqual(cli.run(["limit", String(id), "0"]).exitCode, 0)
        try waitCompleted(id, timeout: 60)
        try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
        let attempts = try XCTUnwrap(try cli.job(id)["attemptLog"] as? [[String: Any]])
        XCTAssertEqual(attempts.last?["httpStatus"] as? Int, 206, "the second attempt continued with a Range: \(attempts)")
        XCTAssertGreaterThan(jsonInt(attempts.last?["rangeStart"]) ?? 0, 0)
    }

    func testABackupToAnS3PrefixPutsEachFileUnderItsKey() throws {
        let files = ["top.txt", "a/b/deep.bin", "a/with space.txt"]
        let (tree, digests) = try makeTree(files, size: 64 * KiB)
        let result = try cli.backup(tree, to: "s3://\(s3.bucket)/backups/tree", ["--s3-endpoint", s3.endpoint])
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        let waited = cli.run(["wait", "--batch", String(batch)], timeout: 60)
        XCTAssertEqual(waited.exitCode, 0, waited.summary)
        for relative in files {
            let object = try XCTUnwrap(try s3.objectSHA256("backups/tree/" + relative), relative)
            XCTAssertEqual(object.sha256, digests[relative], relative)
        }
    }
}
