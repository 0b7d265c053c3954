import Foundation
import XCTest

/// `transferctl backup DIR --to PREFIX`: one batch, one PUT per regular file into nginx's
/// WebDAV location `/dav/`; later runs send only what changed; a crash in the middle of a
/// large backup loses nothing and repeats only what was in flight.
final class BackupTests: IntegrationTestCase {
    /// The directory being backed up (fresh per test).
    private var tree: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
    }

    // MARK: helpers

    @discardableResult
    private func write(_ relative: String, _ data: Data) throws -> URL {
        let url = tree.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url
    }

    @discardableResult
    private func write(_ relative: String, size: Int) throws -> URL { try write(relative, Files.randomData(count: size)) }

    /// Every regular file of the tree (by relative path), symlinks not followed.
    private func treeFiles() -> [String: URL] {
        var files: [String: URL] = [:]
        guard let walker = FileManager.default.enumerator(atPath: tree.path) else { return [:] }
        while let relative = walker.nextObject() as? String {
            let url = tree.appendingPathComponent(relative)
            let type = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
            if type == .typeRegular { files[relative] = url }
        }
        return files
    }

    /// The server holds exactly `expected` (paths relative to the tree) under `/dav/backup/`,
    /// each byte-identical to the tree.
    private func assertServerMatches(_ expected: Set<String>, file: StaticString = #filePath, line: UInt = #line) throws {
        let onServer = nginx.davFiles()
        XCTAssertEqual(Set(onServer.keys), Set(expected.map { "backup/" + $0 }), "files on the server", file: file, line: line)
        var mismatched: [String] = []
        for relative in expected.sorted() {
            guard let stored = onServer["backup/" + relative] else { continue }
            let local = try Data(contentsOf: tree.appendingPathComponent(relative))
            if try Data(contentsOf: stored) != local { mismatched.append(relative) }
        }
        XCTAssertEqual(mismatched, [], "server copies that differ from the tree", file: file, line: line)
    }

    private func batchID(_ result: [String: Any]) throws -> Int {
        try XCTUnwrap(jsonInt(result["batch"]), "backup --json has no batch id: \(result)")
    }

    /// Runs a backup whose files all end; `wait --batch` must exit 0.
    @discardableResult
    private func backupAndWait(_ options: [String] = [], timeout: Int = 25) throws -> (result: [String: Any], batch: Int) {
        let result = try cli.backup(tree, to: nginx.davURL("backup"), options)
        let batch = try batchID(result)
        let waited = cli.wait(batch: batch, timeout: timeout)
        XCTAssertEqual(waited.exitCode, 0, "wait --batch \(batch): \(waited.summary)\nbatch: "
            + "\((try? cli.batch(batch))?.jsonText ?? "?")")
        return (result, batch)
    }

    // MARK: tests

    func testTreeIsUploadedWithIdenticalBytesAndSymlinksAreSkipped() throws {
        try write("top.txt", Data("top level\n".utf8))
        try write("a/b/c/deep.bin", size: 100 * KiB + 7)
        try write("a/with space.txt", size: 3 * KiB)
        try write("é/naïve café.bin", size: 20 * KiB)
        try write("empty.dat", Data())
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: tree.appendingPathComponent("link-to-top").path, withDestinationPath: "top.txt")
        try fm.createSymbolicLink(atPath: tree.appendingPathComponent("link-to-a").path, withDestinationPath: "a")
        let expected: Set<String> = ["top.txt", "a/b/c/deep.bin", "a/with space.txt", "é/naïve café.bin", "empty.dat"]
        XCTAssertEqual(Set(treeFiles().keys), expected, "test setup")

        let (result, batch) = try backupAndWait()
        XCTAssertEqual(jsonInt(result["jobs"]), expected.count, "one job per regular file: \(result)")
        XCTAssertEqual(jsonInt(result["skipped"]), 0, "\(result)")

        try assertServerMatches(expected)
        XCTAssertEqual(nginx.davPutCounts(), Dictionary(uniqueKeysWithValues: expected.map { ("backup/" + $0, 1) }),
                       "one PUT per file, none for the symlinks; log:\n\(nginx.describeLog())")
        let raw = nginx.davPutRawPaths()
        XCTAssertTrue(raw.contains("backup/a/with%20space.txt"), "space percent-encoded: \(raw)")
        XCTAssertTrue(raw.contains("backup/%C3%A9/na%C3%AFve%20caf%C3%A9.bin"), "UTF-8 percent-encoded: \(raw)")
        XCTAssertTrue(nginx.davPuts().allSatisfy { $0.status == 201 }, "every PUT created its file: \(nginx.davPuts())")

        let shown = try cli.batch(batch)
        XCTAssertEqual(shown.state, "completed", shown.jsonText)
        XCTAssertEqual(shown.jobCount, expected.count, shown.jsonText)
        XCTAssertEqual(shown.jobCounts["completed"], expected.count, shown.jsonText)
        let totalBytes = expected.reduce(0) { $0 + (Files.size(tree.appendingPathComponent($1)) ?? 0) }
        XCTAssertEqual(jsonInt(shown["bytesDone"]), totalBytes, "bytesDone: \(shown.jsonText)")
        let target = try XCTUnwrap(shown["backup"] as? [String: Any], "batch show has the backup target: \(shown.jsonText)")
        XCTAssertEqual(target["directory"] as? String, tree.path, shown.jsonText)
        XCTAssertEqual(target["prefix"] as? String, nginx.davURL("backup"), shown.jsonText)

        // Every job is a PUT of the file itself, to the encoded URL.
        let jobs = try cli.jobs(batch: batch)
        XCTAssertEqual(jobs.count, expected.count)
        for job in jobs {
            XCTAssertEqual(job.kind, "upload", job.jsonText)
            XCTAssertEqual(job.method, "PUT", job.jsonText)
            XCTAssertEqual(job.state, "completed", job.jsonText)
        }
    }

    /// The issue's case: `dir\xff/` with three files, and names that are not UTF-8 beside it.
    /// Every file is uploaded, to a URL that percent-encodes its bytes (`dir%FF`), and arrives
    /// under exactly those bytes with exactly its contents; nothing is skipped; a second run
    /// sees every one of them unchanged.
    func testNamesThatAreNotUTF8AreUploadedAsTheirBytes() throws {
        let dir: [UInt8] = Array("dir".utf8) + [0xFF]
        let files: [(relative: [UInt8], encoded: String)] = [
            (dir + Array("/a.txt".utf8), "dir%FF/a.txt"),
            (dir + Array("/caf".utf8) + [0xE9] + Array(".txt".utf8), "dir%FF/caf%E9.txt"),  // Latin-1
            (dir + [UInt8(ascii: "/"), 0x80, 0x80], "dir%FF/%80%80"),
            (Array("broken".utf8) + [0xC3, 0x28] + Array(".bin".utf8), "broken%C3%28.bin"),
            (Array("ok.txt".utf8), "ok.txt"),
        ]
        var contents: [[UInt8]: Data] = [:]
        for (index, file) in files.enumerated() {
            contents[file.relative] = Files.randomData(count: 1 * KiB + index * 313)
            try RawFiles.write(contents[file.relative]!, to: RawFiles.path(tree, file.relative))
        }

        let (result, batch) = try backupAndWait()
        XCTAssertEqual(jsonInt(result["jobs"]), files.count, "one job per file, none skipped: \(result)")
        XCTAssertEqual(jsonInt(result["skipped"]), 0, "\(result)")
        XCTAssertEqual(try cli.batch(batch).jobCounts["completed"], files.count)

        let backupRoot = nginx.davRoot.appendingPathComponent("backup")
        for file in files {
            let stored = RawFiles.read(RawFiles.path(backupRoot, file.relative))
            XCTAssertEqual(stored, contents[file.relative], "\(RawFiles.describe(file.relative)) on the server, byte for byte")
        }
        XCTAssertEqual(Set(nginx.davPutRawPaths()), Set(files.map { "backup/" + $0.encoded }), "log:\n\(nginx.describeLog())")
        XCTAssertEqual(Set(RawFiles.names(in: RawFiles.path(backupRoot, dir))),
                       Set(files.filter { $0.relative.starts(with: dir + [UInt8(ascii: "/")]) }.map { Array($0.relative.dropFirst(dir.count + 1)) }),
                       "nothing else in dir\\xff on the server")

        let again = try cli.backup(tree, to: nginx.davURL("backup"))
        XCTAssertEqual(jsonInt(again["jobs"]), 0, "a second run sends nothing: \(again)")
        XCTAssertEqual(jsonInt(again["skipped"]), files.count, "\(again)")
    }

    func testFollowSymlinksUploadsTheTargets() throws {
        try write("real/file.txt", size: 2 * KiB)
        try FileManager.default.createSymbolicLink(atPath: tree.appendingPathComponent("alias.txt").path,
                                                   withDestinationPath: "real/file.txt")
        let (result, _) = try backupAndWait(["--follow-symlinks"])
        XCTAssertEqual(jsonInt(result["jobs"]), 2, "\(result)")
        let onServer = nginx.davFiles()
        XCTAssertEqual(Set(onServer.keys), ["backup/alias.txt", "backup/real/file.txt"])
        if let alias = onServer["backup/alias.txt"] {
            XCTAssertEqual(try Data(contentsOf: alias), try Data(contentsOf: tree.appendingPathComponent("real/file.txt")))
        }
    }

    func testSecondRunSendsNothingAndAChangedFileAlone() throws {
        for i in 0..<6 { try write("dir\(i % 2)/file\(i).bin", size: (i + 1) * KiB) }
        let expected = Set(treeFiles().keys)
        try backupAndWait()
        try assertServerMatches(expected)
        let putsAfterFirst = nginx.davPuts().count
        XCTAssertEqual(putsAfterFirst, expected.count, "log:\n\(nginx.describeLog())")

        // Unchanged: a new batch with no job, state empty, and no request at all.
        let second = try cli.backup(tree, to: nginx.davURL("backup"))
        let secondBatch = try batchID(second)
        XCTAssertEqual(jsonInt(second["jobs"]), 0, "\(second)")
        XCTAssertEqual(jsonInt(second["skipped"]), expected.count, "\(second)")
        let shown = try cli.batch(secondBatch)
        XCTAssertEqual(shown.state, "empty", shown.jsonText)
        XCTAssertEqual(shown.jobCount, 0, shown.jsonText)
        XCTAssertEqual(cli.wait(batch: secondBatch, timeout: 5).exitCode, 0, "wait on an empty batch")
        XCTAssertEqual(nginx.davPuts().count, putsAfterFirst, "second run sent nothing; log:\n\(nginx.describeLog())")

        // One file changes (new content, new size): it alone is sent again.
        let changed = "dir1/file3.bin"
        try write(changed, size: 9 * KiB + 1)
        let (third, _) = try backupAndWait()
        XCTAssertEqual(jsonInt(third["jobs"]), 1, "\(third)")
        XCTAssertEqual(jsonInt(third["skipped"]), expected.count - 1, "\(third)")
        let newPuts = nginx.davPuts().dropFirst(putsAfterFirst).map(\.path)
        XCTAssertEqual(newPuts, ["backup/" + changed], "log:\n\(nginx.describeLog())")
        XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(nginx.davFiles()["backup/" + changed])),
                       try Data(contentsOf: tree.appendingPathComponent(changed)), "the server has the new version")
    }

    func testChecksumSkipsATouchedButIdenticalFile() throws {
        try write("same.bin", size: 8 * KiB)
        try write("other.bin", size: 4 * KiB)
        try backupAndWait(["--checksum"])
        XCTAssertEqual(nginx.davPuts().count, 2)

        // Same bytes, later modification time.
        let touched = tree.appendingPathComponent("same.bin")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: touched.path)

        let withChecksum = try cli.backup(tree, to: nginx.davURL("backup"), ["--checksum"])
        XCTAssertEqual(jsonInt(withChecksum["jobs"]), 0, "--checksum: identical contents are not sent: \(withChecksum)")
        XCTAssertEqual(try cli.batch(try batchID(withChecksum)).state, "empty")
        XCTAssertEqual(nginx.davPuts().count, 2, "log:\n\(nginx.describeLog())")

        // Without --checksum the new modification time counts as a change (the touch was real).
        let (bySize, _) = try backupAndWait()
        XCTAssertEqual(jsonInt(bySize["jobs"]), 1, "size+mtime sees the touched file: \(bySize)")
        XCTAssertEqual(nginx.davPuts().dropFirst(2).map(\.path), ["backup/same.bin"])
    }

    /// The issue's acceptance test: 1,000 small files, transferd killed with -9 about halfway,
    /// restarted: every file arrives intact, none is sent more than twice, and another run
    /// sends nothing.
    func testThousandFileBackupSurvivesKill9() throws {
        let count = 1000
        for i in 0..<count {
            try write(String(format: "d%02d/f%04d.bin", i % 37, i), size: KiB + (i * 37) % (3 * KiB))
        }
        let expected = Set(treeFiles().keys)
        XCTAssertEqual(expected.count, count, "test setup")

        let started = Date()
        let result = try cli.backup(tree, to: nginx.davURL("backup"))
        let batch = try batchID(result)
        XCTAssertEqual(jsonInt(result["jobs"]), count, "\(result)")

        let halfway = try cli.awaitBatch(batch, "400-600 jobs completed", timeout: 40, interval: 0.02) {
            ($0.jobCounts["completed"] ?? 0) >= 400
        }
        daemon.kill9()
        let completedAtKill = halfway.jobCounts["completed"] ?? 0
        XCTAssertLessThan(completedAtKill, count, "killed before the end: \(halfway.jsonText)")
        let putsAtKill = nginx.davPuts().count
        try daemon.start()

        // Running the backup again while it continues queues nothing twice.
        let during = try cli.backup(tree, to: nginx.davURL("backup"))
        XCTAssertEqual(jsonInt(during["jobs"]), 0, "a backup run during the resumed one: \(during)")
        XCTAssertEqual(jsonInt(during["skipped"]), count, "\(during)")

        let waited = cli.wait(batch: batch, timeout: 40)
        XCTAssertEqual(waited.exitCode, 0, "wait --batch after restart: \(waited.summary)\n"
            + "batch: \((try? cli.batch(batch))?.jsonText ?? "?")")
        let elapsed = Date().timeIntervalSince(started)

        let shown = try cli.batch(batch)
        XCTAssertEqual(shown.state, "completed", shown.jsonText)
        XCTAssertEqual(shown.jobCounts["completed"], count, shown.jsonText)
        XCTAssertEqual(shown.jobCount, count, "restart created no extra jobs: \(shown.jsonText)")

        let onServer = nginx.davFiles()
        XCTAssertEqual(Set(onServer.keys), Set(expected.map { "backup/" + $0 }),
                       "missing: \(Set(expected.map { "backup/" + $0 }).subtracting(onServer.keys).sorted().prefix(10))")
        var differing: [String] = []
        for relative in expected where onServer["backup/" + relative] != nil {
            if try Data(contentsOf: onServer["backup/" + relative]!) != Data(contentsOf: tree.appendingPathComponent(relative)) {
                differing.append(relative)
            }
        }
        XCTAssertEqual(differing.sorted(), [], "server copies that differ")

        let counts = nginx.davPutCounts()
        let repeated = counts.filter { $0.value > 1 }
        XCTAssertEqual(counts.filter { $0.value > 2 }, [:], "no path PUT more than twice")
        // Only what was in flight at the kill is sent again: at most the daemon's active slots
        // (4), plus requests nginx logged late; anything near the whole batch means a restart
        // from scratch.
        XCTAssertLessThanOrEqual(repeated.count, 8, "paths sent twice: \(repeated.keys.sorted())")
        XCTAssertGreaterThanOrEqual(putsAtKill, completedAtKill, "each completed job had its PUT logged")

        // And another run sends nothing.
        let before = nginx.davPuts().count
        let again = try cli.backup(tree, to: nginx.davURL("backup"))
        XCTAssertEqual(jsonInt(again["jobs"]), 0, "\(again)")
        XCTAssertEqual(jsonInt(again["skipped"]), count, "\(again)")
        XCTAssertEqual(try cli.batch(try batchID(again)).state, "empty")
        XCTAssertEqual(nginx.davPuts().count, before, "the run after the restart sent nothing")
        print("1000-file backup with kill -9 at \(completedAtKill) completed: \(String(format: "%.1f", elapsed)) s; "
            + "\(repeated.count) paths sent twice")
    }
}

/// `backup --method POST -F k=v`: each file posted to the prefix as a form with the extra
/// fields, a `path` field holding the relative path, and the file part `file`.
final class PostBackupTests: UploadTestCase {
    func testPostSendsOneFormPerFileWithItsRelativePath() throws {
        let tree = sources!
        let nested = try makeUploadFile("sub dir/é.bin", size: 7 * KiB)
        let top = try makeUploadFile("top.txt", Data("hello\n".utf8))
        let result = try cli.backup(tree, to: receiver.uploadURL(), ["--method", "POST", "-F", "owner=ops"])
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        XCTAssertEqual(jsonInt(result["jobs"]), 2, "\(result)")
        let waited = cli.wait(batch: batch)
        XCTAssertEqual(waited.exitCode, 0, waited.summary)

        let uploads = try receiver.awaitUploads(count: 2)
        XCTAssertEqual(uploads.count, 2, receiver.describeLog())
        // Files are queued in sorted order of their relative paths.
        let expected: [(relative: String, source: URL, filename: String)] = [
            ("sub dir/é.bin", nested, "é.bin"), ("top.txt", top, "top.txt"),
        ]
        var byPath: [String: Int] = [:]
        for (number, manifest) in uploads.enumerated() {
            let parts = manifest["parts"] as? [[String: Any]] ?? []
            if let path = parts.first(where: { $0["name"] as? String == "path" })?["value"] as? String {
                byPath[path] = number + 1
            }
        }
        XCTAssertEqual(Set(byPath.keys), Set(expected.map(\.relative)), receiver.describeLog())
        for want in expected {
            guard let number = byPath[want.relative], let manifest = receiver.manifest(number) else { continue }
            let contentType = want.filename.hasSuffix(".txt") ? "text/plain" : "application/octet-stream"
            try assertParts(manifest, upload: number, [
                .field(name: "owner", value: "ops"),
                .field(name: "path", value: want.relative),
                .file(name: "file", source: want.source, filename: want.filename, contentType: contentType),
            ])
        }

        // Unchanged: nothing is posted again.
        let again = try cli.backup(tree, to: receiver.uploadURL(), ["--method", "POST", "-F", "owner=ops"])
        XCTAssertEqual(jsonInt(again["jobs"]), 0, "\(again)")
        XCTAssertEqual(receiver.uploads().count, 2)
    }

    func testPutRefusesFormFields() throws {
        try makeUploadFile("a.bin", size: 1 * KiB)
        let result = cli.run(["backup", sources.path, "--to", receiver.uploadURL(), "-F", "owner=ops"])
        XCTAssertEqual(result.exitCode, 2, result.summary)
        assertOneLineMessage(result.stderr, "-F with PUT")
        XCTAssertEqual(try cli.batches().count, 0)
    }
}
