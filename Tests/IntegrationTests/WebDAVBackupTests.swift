import Foundation
import XCTest

/// `transferctl backup DIR --to PREFIX` against a real RFC 4918 server, `rclone serve webdav`,
/// which refuses a PUT whose parent collection does not exist: the daemon makes the prefix and
/// every directory with MKCOL first, once per collection per backup, with the job's headers
/// (basic auth here) and TLS options; a refused MKCOL fails the files below it with its status.
final class WebDAVBackupTests: IntegrationTestCase {
    private var tree: URL!
    private var rclone: RcloneWebDAV!

    override func setUpWithError() throws {
        try super.setUpWithError()
        tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        rclone = try RcloneWebDAV(directory: workDir.appendingPathComponent("rclone"), credentials: ("backup", "s3cret"))
        try rclone.start()
    }

    override func tearDownWithError() throws {
        rclone?.stop()
        if let run = testRun, run.totalFailureCount > 0, let rclone {
            print("---- rclone log (tail):\n\(rclone.log().suffix(6000))\n----")
        }
        try super.tearDownWithError()
    }

    // MARK: helpers

    @discardableResult
    private func write(_ relative: String, size: Int) throws -> URL {
        let url = tree.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Files.randomData(count: size).write(to: url)
        return url
    }

    /// Backs the tree up to rclone's `/backup` with its credentials; returns the batch id.
    private func backup(_ options: [String] = []) throws -> Int {
        let auth = try XCTUnwrap(rclone.authorizationHeader)
        let result = try cli.backup(tree, to: rclone.url("backup"), ["-H", auth] + options)
        return try XCTUnwrap(jsonInt(result["batch"]), "backup --json has no batch id: \(result)")
    }

    /// The batch ends with `wait --batch` exiting `status`.
    private func wait(_ batch: Int, exits status: Int32, file: StaticString = #filePath, line: UInt = #line) {
        let waited = cli.wait(batch: batch, timeout: 30)
        XCTAssertEqual(waited.exitCode, status, "wait --batch \(batch): \(waited.summary)\njobs: "
            + "\(((try? cli.jobs(batch: batch)) ?? []).map(\.jsonText))", file: file, line: line)
    }

    /// Each of `relativePaths` is on rclone's disk under `backup/`, byte for byte the tree's.
    private func assertOnServer(_ relativePaths: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let onServer = rclone.files()
        for relative in relativePaths {
            guard let stored = onServer["backup/" + relative] else {
                XCTFail("backup/\(relative) is not on the server: \(onServer.keys.sorted())", file: file, line: line)
                continue
            }
            XCTAssertEqual(try Data(contentsOf: stored), try Data(contentsOf: tree.appendingPathComponent(relative)),
                           "backup/\(relative) differs from the tree", file: file, line: line)
        }
    }

    /// MKCOL requests per decoded path, once the server has logged at least `count` of them.
    private func mkcolCounts(atLeast count: Int) -> [String: Int] {
        poll(timeout: 5) { rclone.requests("MKCOL").count >= count }
        return rclone.requests("MKCOL").reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    // MARK: tests

    func testBackupMakesEveryCollectionOnceAndUploadsEveryFile() throws {
        let files = ["top.txt", "with space.txt", "é/naïve café.bin", "a/b/c/d/deep.bin", "a/b/other.txt",
                     "a/x y/z.txt", "a/x y/日本.txt", "empty.dat"]
        for (index, relative) in files.enumerated() { try write(relative, size: relative == "empty.dat" ? 0 : 3 * KiB + index * 977) }

        let batch = try backup()
        wait(batch, exits: 0)
        try assertOnServer(files)
        XCTAssertEqual(Set(rclone.files().keys), Set(files.map { "backup/" + $0 }), "nothing else on the server")
        for job in try cli.jobs(batch: batch) {
            XCTAssertEqual(job.state, "completed", job.jsonText)
            XCTAssertEqual(job.httpStatus, 201, job.jsonText)
        }

        // The prefix and each directory, parents first, each asked for exactly once in the batch
        // (jobs that needed one while its MKCOL was on its way waited for it).
        let collections = ["/backup/", "/backup/a/", "/backup/a/b/", "/backup/a/b/c/", "/backup/a/b/c/d/",
                           "/backup/a/x y/", "/backup/é/"]
        let counts = mkcolCounts(atLeast: collections.count)
        XCTAssertEqual(counts, Dictionary(uniqueKeysWithValues: collections.map { ($0, 1) }), "MKCOLs:\n\(rclone.log())")
        let order = rclone.requests("MKCOL")
        for (parent, child) in [("/backup/", "/backup/a/"), ("/backup/a/", "/backup/a/b/"), ("/backup/a/b/c/", "/backup/a/b/c/d/")] {
            XCTAssertLessThan(try XCTUnwrap(order.firstIndex(of: parent)), try XCTUnwrap(order.firstIndex(of: child)),
                              "\(parent) is made before \(child): \(order)")
        }
        XCTAssertEqual(rclone.requests("PUT").sorted(), files.map { "/backup/" + $0 }.sorted(), "one PUT per file")
    }

    /// Names that are not UTF-8 (`dir\xff/`): the MKCOL and the PUTs percent-encode their bytes,
    /// and rclone stores every file under exactly those bytes with its contents.
    func testNamesThatAreNotUTF8AreUploaded() throws {
        let dir: [UInt8] = Array("dir".utf8) + [0xFF]
        let files: [[UInt8]] = [dir + Array("/a.txt".utf8), dir + Array("/caf".utf8) + [0xE9] + Array(".txt".utf8),
                                dir + [UInt8(ascii: "/"), 0x80]]
        var contents: [Data] = []
        for (index, relative) in files.enumerated() {
            contents.append(Files.randomData(count: 2 * KiB + index * 101))
            try RawFiles.write(contents[index], to: RawFiles.path(tree, relative))
        }

        let batch = try backup()
        wait(batch, exits: 0)
        XCTAssertEqual(try cli.jobs(batch: batch).count, files.count, "one job per file")
        XCTAssertEqual(mkcolCounts(atLeast: 2), ["/backup/": 1, "/backup/dir\u{FFFD}/": 1], "MKCOLs:\n\(rclone.log())")
        let backupRoot = rclone.root.appendingPathComponent("backup")
        for (index, relative) in files.enumerated() {
            XCTAssertEqual(RawFiles.read(RawFiles.path(backupRoot, relative)), contents[index],
                           "\(RawFiles.describe(relative)) on the server, byte for byte")
        }
        XCTAssertEqual(RawFiles.names(in: RawFiles.path(backupRoot, dir)).count, files.count, "nothing else on the server")
    }

    func testSecondBackupIntoTheSamePrefixAcceptsExistingCollections() throws {
        try write("a/b/c/deep.bin", size: 40 * KiB)
        try write("a/b/kept.txt", size: 2 * KiB)
        try write("top.txt", size: KiB)
        wait(try backup(), exits: 0)
        let firstMkcols = mkcolCounts(atLeast: 4)
        XCTAssertEqual(firstMkcols.values.reduce(0, +), 4, "\(firstMkcols)")

        // A changed file deep in an existing directory, a new file beside it, one in a new
        // directory below it, and a new top-level directory.
        try write("a/b/c/deep.bin", size: 41 * KiB)
        try write("a/b/c/new file.txt", size: 5 * KiB)
        try write("a/b/c/e/f/newer.bin", size: 7 * KiB)
        try write("ñ/x.txt", size: 100)
        let second = try backup()
        wait(second, exits: 0)
        XCTAssertEqual(try cli.jobs(batch: second).count, 4, "only what changed is sent")
        try assertOnServer(["a/b/c/deep.bin", "a/b/kept.txt", "top.txt", "a/b/c/new file.txt", "a/b/c/e/f/newer.bin", "ñ/x.txt"])

        // The second batch asked again for what it needed (rclone answers 201 for an existing
        // collection), once each.
        let counts = mkcolCounts(atLeast: 4 + 7)
        for existing in ["/backup/", "/backup/a/", "/backup/a/b/", "/backup/a/b/c/"] {
            XCTAssertEqual(counts[existing], 2, "\(existing) once per batch: \(counts)")
        }
        for new in ["/backup/a/b/c/e/", "/backup/a/b/c/e/f/", "/backup/ñ/"] {
            XCTAssertEqual(counts[new], 1, "\(new): \(counts)")
        }
    }

    /// Filtered out, a file is not sent and an excluded directory is neither sent nor made; a
    /// dry run before says so and asks the server nothing.
    func testFiltersLeaveOutFilesAndTheirCollections() throws {
        let kept = ["top.txt", "keep/a.txt", "deep/z.txt", "deep/er/w.txt"]
        for (index, relative) in (kept + ["keep/skip.tmp", "cache/x.bin", "deep/cache/y.bin"]).enumerated() {
            try write(relative, size: KiB + index * 101)
        }
        let filters = ["--exclude", "*.tmp", "--exclude", "cache/"]
        let auth = try XCTUnwrap(rclone.authorizationHeader)
        let dry = cli.run(["backup", tree.path, "--to", rclone.url("backup"), "-H", auth, "--dry-run"] + filters)
        XCTAssertEqual(dry.exitCode, 0, dry.summary)
        XCTAssertEqual(dry.stdout.split(separator: "\n").map(String.init), [
            "skip cache/ (excluded by --exclude 'cache/')",
            "skip deep/cache/ (excluded by --exclude 'cache/')",
            "send deep/er/w.txt (new)",
            "send deep/z.txt (new)",
            "send keep/a.txt (new)",
            "skip keep/skip.tmp (excluded by --exclude '*.tmp')",
            "send top.txt (new)",
            "dry run: 4 to send (4.6 KiB), 1 excluded, 2 directories excluded; nothing was queued",
        ])
        XCTAssertEqual(try cli.batches().count, 0, "a dry run creates no batch")
        XCTAssertEqual(rclone.requests("MKCOL") + rclone.requests("PUT"), [], "and asks the server nothing")

        let batch = try backup(filters)
        wait(batch, exits: 0)
        try assertOnServer(kept)
        XCTAssertEqual(Set(rclone.files().keys), Set(kept.map { "backup/" + $0 }), "nothing else on the server")
        XCTAssertEqual(rclone.requests("PUT").sorted(), kept.map { "/backup/" + $0 }.sorted(), "one PUT per file kept")
        let collections = ["/backup/", "/backup/deep/", "/backup/deep/er/", "/backup/keep/"]
        XCTAssertEqual(mkcolCounts(atLeast: collections.count), Dictionary(uniqueKeysWithValues: collections.map { ($0, 1) }),
                       "no collection for an excluded directory: \(rclone.log())")
    }

    func testARefusedCollectionFailsItsFilesWithItsStatusAndRetryAsksAgain() throws {
        // The prefix's parent does not exist: rclone answers the MKCOL of the prefix 409.
        let files = ["top.txt", "d/one.txt", "d/e/two.txt"]
        for (index, relative) in files.enumerated() { try write(relative, size: (index + 1) * KiB) }
        let auth = try XCTUnwrap(rclone.authorizationHeader)
        let result = try cli.backup(tree, to: rclone.url("missing/backup"), ["-H", auth])
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        wait(batch, exits: 1)

        let jobs = try cli.jobs(batch: batch)
        XCTAssertEqual(jobs.count, files.count)
        for job in jobs {
            XCTAssertEqual(job.state, "failed", job.jsonText)
            XCTAssertEqual(job.errorCode, "collection", job.jsonText)
            XCTAssertEqual(job.httpStatus, 409, job.jsonText)
            XCTAssertEqual(job.errorMessage, "cannot create the collection \(rclone.url("missing/backup/")): "
                + "MKCOL was answered HTTP 409", job.jsonText)
            XCTAssertEqual(job.attempts, 1, "409 is not retried: \(job.jsonText)")
            let id = try XCTUnwrap(job.id)
            let attempt = try XCTUnwrap(try cli.job(id).attemptLog.first)
            XCTAssertEqual(jsonInt(attempt["httpStatus"]), 409, "\(attempt)")
            XCTAssertEqual((attempt["error"] as? [String: Any])?["code"] as? String, "collection", "\(attempt)")
        }
        let id = try XCTUnwrap(jobs.first?.id)
        let shown = cli.run(["show", String(id)])
        XCTAssertEqual(shown.exitCode, 0, shown.summary)
        XCTAssertTrue(shown.stdout.contains("collection: cannot create the collection"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("HTTP 409"), shown.stdout)
        XCTAssertEqual(rclone.requests("PUT"), [], "no PUT without its collection")
        XCTAssertTrue(rclone.requests("MKCOL").allSatisfy { $0 == "/missing/backup/" }, "\(rclone.requests("MKCOL"))")

        // Once the parent exists, `retry` asks again (a refusal is not remembered) and succeeds.
        // (Made through the server: rclone caches its directory listings.)
        let made = cli.runner.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                  ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "MKCOL", "-H", auth,
                                   rclone.url("missing/")], timeout: 10)
        XCTAssertEqual(made.stdout, "201", made.summary)
        let retried = cli.run(["retry"] + jobs.compactMap(\.id).map(String.init))
        XCTAssertEqual(retried.exitCode, 0, retried.summary)
        wait(batch, exits: 0)
        let onServer = rclone.files()
        for relative in files {
            let stored = try XCTUnwrap(onServer["missing/backup/" + relative], "\(onServer.keys.sorted())")
            XCTAssertEqual(try Data(contentsOf: stored), try Data(contentsOf: tree.appendingPathComponent(relative)))
        }
    }

    func testAFileWhereACollectionMustBeFailsOnlyTheFilesBelowIt() throws {
        // rclone answers the MKCOL of `backup/blocked/` 405, as for an existing collection, and
        // then refuses the PUT below it: those files fail with that status, the others arrive.
        try FileManager.default.createDirectory(at: rclone.root.appendingPathComponent("backup"),
                                                withIntermediateDirectories: true)
        try Data("not a directory\n".utf8).write(to: rclone.root.appendingPathComponent("backup/blocked"))
        try write("blocked/inner/one.txt", size: KiB)
        try write("blocked/two.txt", size: 2 * KiB)
        try write("fine/ok.txt", size: 3 * KiB)
        try write("top.txt", size: 4 * KiB)

        let batch = try backup()
        wait(batch, exits: 1)
        try assertOnServer(["fine/ok.txt", "top.txt"])
        for job in try cli.jobs(batch: batch) {
            let url = try XCTUnwrap(job["url"] as? String)
            if url.contains("/blocked/") {
                XCTAssertEqual(job.state, "failed", job.jsonText)
                XCTAssertEqual(job.httpStatus, 404, job.jsonText)
            } else {
                XCTAssertEqual(job.state, "completed", job.jsonText)
            }
        }
        XCTAssertEqual(try Data(contentsOf: rclone.root.appendingPathComponent("backup/blocked")),
                       Data("not a directory\n".utf8), "the file in the way is untouched")
    }
}

/// The MKCOLs carry the job's TLS options, as its PUTs do: rclone over https with a certificate
/// only the test's CA vouches for, trusted with `--cacert`.
final class WebDAVBackupTLSTests: IntegrationTestCase {
    func testCollectionsAreMadeWithTheJobsTLSOptionsAndHeaders() throws {
        let tls = try TLSFixture(directory: workDir.appendingPathComponent("tls"))
        let rclone = try RcloneWebDAV(directory: workDir.appendingPathComponent("rclone"), credentials: ("u", "p"),
                                      tls: (tls.serverCert, tls.serverKey))
        try rclone.start()
        defer { rclone.stop() }
        let tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree.appendingPathComponent("d/e"), withIntermediateDirectories: true)
        let data = Files.randomData(count: 10 * KiB)
        try data.write(to: tree.appendingPathComponent("d/e/f.bin"))

        let auth = try XCTUnwrap(rclone.authorizationHeader)
        let result = try cli.backup(tree, to: rclone.url("secure"), ["-H", auth, "--cacert", tls.caCert.path])
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        let waited = cli.wait(batch: batch, timeout: 30)
        XCTAssertEqual(waited.exitCode, 0, "\(waited.summary)\n\(((try? cli.jobs(batch: batch)) ?? []).map(\.jsonText))\n"
            + rclone.log())
        XCTAssertEqual(try Data(contentsOf: rclone.root.appendingPathComponent("secure/d/e/f.bin")), data)
        poll(timeout: 5) { rclone.requests("MKCOL").count >= 3 }
        XCTAssertEqual(rclone.requests("MKCOL"), ["/secure/", "/secure/d/", "/secure/d/e/"])
    }
}
