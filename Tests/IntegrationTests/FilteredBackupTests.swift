import Foundation
import XCTest

/// `backup --include/--exclude/--exclude-from` (rsync's rules, first match wins) and
/// `backup --dry-run`, against nginx's WebDAV location `/dav/`: exactly the files the rules
/// keep arrive, an excluded directory is never read, and a dry run says what a backup would
/// do with each file and why while queueing nothing.
final class FilteredBackupTests: IntegrationTestCase {
    private var tree: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        tree = workDir.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        // A directory a test locked must be removable again.
        if let tree { _ = chmod(tree.appendingPathComponent("locked").path, 0o755) }
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

    /// Writes every one of `files` (1 KiB and more each).
    private func write(_ files: [String]) throws {
        for (index, relative) in files.enumerated() { try write(relative, size: KiB + index * 131) }
    }

    /// Backs the tree up with `options` and waits for the batch, which must complete.
    @discardableResult
    private func backupAndWait(_ options: [String]) throws -> [String: Any] {
        let result = try cli.backup(tree, to: nginx.davURL("backup"), options)
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "backup --json has no batch id: \(result)")
        let waited = cli.wait(batch: batch, timeout: 30)
        XCTAssertEqual(waited.exitCode, 0, "wait --batch \(batch): \(waited.summary)")
        return result
    }

    /// The server holds exactly `expected` under `/dav/backup/`, each the tree's bytes, and each
    /// was PUT once.
    private func assertServerHolds(_ expected: Set<String>, file: StaticString = #filePath, line: UInt = #line) throws {
        let onServer = nginx.davFiles()
        XCTAssertEqual(Set(onServer.keys), Set(expected.map { "backup/" + $0 }), "files on the server", file: file, line: line)
        for relative in expected.sorted() {
            guard let stored = onServer["backup/" + relative] else { continue }
            XCTAssertEqual(try Data(contentsOf: stored), try Data(contentsOf: tree.appendingPathComponent(relative)),
                           "backup/\(relative) differs from the tree", file: file, line: line)
        }
        XCTAssertEqual(nginx.davPutCounts(), Dictionary(uniqueKeysWithValues: expected.map { ("backup/" + $0, 1) }),
                       "one PUT per file kept, none for the others; log:\n\(nginx.describeLog())", file: file, line: line)
    }

    /// `backup --dry-run` with `options`: exits 0, and its stdout lines.
    private func dryRun(_ options: [String], json: Bool = false, file: StaticString = #filePath,
                        line: UInt = #line) -> [String] {
        let result = cli.run((json ? ["--json"] : []) + ["backup", tree.path, "--to", nginx.davURL("backup"), "--dry-run"]
                             + options)
        XCTAssertEqual(result.exitCode, 0, result.summary, file: file, line: line)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    // MARK: tests

    func testTheRulesDecideWhichFilesArrive() throws {
        try write(["top.txt", "notes.tmp", "a/b/x.tmp", "a/b/keep.tmp", "a/b/photo.jpg", "cache/big.bin", "a/cache/c.bin",
                   "d/cache", "build/out.o", "src/build/kept.o", "logs/2024-01.log", "logs/2024-02.log", "logs/readme",
                   "a/b/c/deep.txt"])
        let options = ["--include", "keep.tmp", "--exclude", "*.tmp",  // the first match wins
                       "--exclude", "cache/",  // directories only: d/cache is a file
                       "--exclude=/build/",  // anchored: src/build stays
                       "--exclude", "logs/*-0[2-9].log",  // matches at the end of the path
                       "--exclude", "a/b/c"]  // a directory too, without a trailing slash
        let expected: Set<String> = ["top.txt", "a/b/keep.tmp", "a/b/photo.jpg", "d/cache", "src/build/kept.o",
                                     "logs/2024-01.log", "logs/readme"]
        let result = try backupAndWait(options)
        XCTAssertEqual(jsonInt(result["jobs"]), expected.count, "one job per file kept: \(result)")
        try assertServerHolds(expected)

        // The same rules with the include after the exclude: the exclude wins.
        let reversed = dryRun(["--exclude", "*.tmp", "--include", "keep.tmp"])
        XCTAssertTrue(reversed.contains("skip a/b/keep.tmp (excluded by --exclude '*.tmp')"), reversed.joined(separator: "\n"))
    }

    /// rsync's rule for directories, as documented: `--include '*.jpg' --exclude '*'` excludes
    /// every subdirectory (`*` matches it), and `--include '*/'` first walks them all.
    func testIncludeOnlyJPGsNeedsAnIncludeForDirectories() throws {
        try write(["a.jpg", "b.txt", "sub/c.jpg", "sub/d.txt", "sub/deep/e.jpg"])
        let first = try backupAndWait(["--include", "*.jpg", "--exclude", "*"])
        XCTAssertEqual(jsonInt(first["jobs"]), 1, "\(first)")
        try assertServerHolds(["a.jpg"])
        XCTAssertEqual(dryRun(["--include", "*.jpg", "--exclude", "*"]), [
            "skip a.jpg (unchanged)",
            "skip b.txt (excluded by --exclude '*')",
            "skip sub/ (excluded by --exclude '*')",
            "dry run: 0 to send (0 B), 1 unchanged, 1 excluded, 1 directory excluded; nothing was queued",
        ])

        let second = try backupAndWait(["--include", "*/", "--include", "*.jpg", "--exclude", "*"])
        XCTAssertEqual(jsonInt(second["jobs"]), 2, "\(second)")
        try assertServerHolds(["a.jpg", "sub/c.jpg", "sub/deep/e.jpg"])
    }

    func testExcludeFromTakesItsRulesAtItsPlace() throws {
        try write(["plain.txt", "x.log", "keep/a.log", "y.bak", "tmp/z.txt", "sub/tmp/w.txt", "#hash.txt"])
        let rules = workDir.appendingPathComponent("rules.txt")
        try Data("# editor and log files\n*.log\n\n   \n*.bak\r\n/tmp/\n".utf8).write(to: rules)
        // `keep/**` comes before the file's `*.log`; the file's `*.bak` before the later `--include '*.bak'`.
        let options = ["--include", "keep/**", "--exclude-from", rules.path, "--include", "*.bak"]
        let expected: Set<String> = ["plain.txt", "keep/a.log", "sub/tmp/w.txt", "#hash.txt"]
        let result = try backupAndWait(options)
        XCTAssertEqual(jsonInt(result["jobs"]), expected.count, "\(result)")
        try assertServerHolds(expected)
        let lines = dryRun(options)
        XCTAssertTrue(lines.contains("skip x.log (excluded by --exclude-from \(rules.path):2 '*.log')"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("skip y.bak (excluded by --exclude-from \(rules.path):5 '*.bak')"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains("skip tmp/ (excluded by --exclude-from \(rules.path):6 '/tmp/')"), lines.joined(separator: "\n"))
    }

    /// An excluded directory is not walked: one that cannot be read fails a backup without the
    /// rule, and does no harm with it. (Root reads any directory, so as root transferctl runs
    /// without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH.)
    func testAnExcludedDirectoryIsNeverRead() throws {
        try write(["ok.txt", "locked/secret.bin", "locked/inner/more.bin", "other/fine.txt"])
        XCTAssertEqual(chmod(tree.appendingPathComponent("locked").path, 0o000), 0, "chmod: errno \(errno)")

        let refused = try backupWithoutReadingEverything([])
        XCTAssertEqual(refused.exitCode, 2, "without a rule the locked directory fails the scan: \(refused.summary)")
        assertOneLineMessage(refused.stderr, "unreadable directory")
        XCTAssertTrue(refused.stderr.contains("cannot read \(tree.path)/locked"), refused.stderr)
        XCTAssertEqual(try cli.batches().count, 0, "nothing was queued")

        for rule in ["locked/", "/locked"] {
            let dry = try backupWithoutReadingEverything(["--exclude", rule, "--dry-run"])
            XCTAssertEqual(dry.exitCode, 0, dry.summary)
            XCTAssertTrue(dry.stdout.contains("skip locked/ (excluded by --exclude '\(rule)')"), dry.stdout)
        }
        let result = try backupWithoutReadingEverything(["--json", "--exclude", "locked/"])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let batch = try XCTUnwrap(jsonInt((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["batch"]),
                                  result.summary)
        XCTAssertEqual(cli.wait(batch: batch, timeout: 30).exitCode, 0)
        try assertServerHolds(["ok.txt", "other/fine.txt"])
    }

    /// `transferctl backup TREE --to PREFIX OPTIONS...` by a process that reads only what the
    /// directories' modes let it read.
    private func backupWithoutReadingEverything(_ options: [String]) throws -> CommandResult {
        let arguments = ["--state-dir", cli.stateDir.path, "backup", tree.path, "--to", nginx.davURL("backup")] + options
        guard geteuid() == 0 else { return cli.runner.run(binaries.transferctl, arguments, timeout: 20) }
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs /usr/bin/setpriv")
        return cli.runner.run(URL(fileURLWithPath: "/usr/bin/setpriv"),
                              ["--bounding-set", "-dac_override,-dac_read_search", binaries.transferctl.path] + arguments,
                              timeout: 20)
    }

    func testDryRunSaysWhatAndWhyAndQueuesNothing() throws {
        try write("photos/b.jpg", size: 2 * KiB)
        try write("photos/c.jpg", size: 3 * KiB)
        try backupAndWait([])
        try assertServerHolds(["photos/b.jpg", "photos/c.jpg"])

        try write("photos/a.jpg", size: KiB)
        try write("photos/b.jpg", size: 2 * KiB + 1)  // another size
        try write("photos/tmp/x.tmp", size: 100)
        try write("photos/cache/y.jpg", size: 100)
        let name = Array("photos/caf".utf8) + [0xE9] + Array(".jpg".utf8)  // Latin-1, not UTF-8
        try RawFiles.write(Files.randomData(count: 512), to: RawFiles.path(tree, name))
        let batchesBefore = try cli.batches().count
        let jobsBefore = try cli.jobs().count
        let putsBefore = nginx.davPuts().count

        let filters = ["--exclude", "*.tmp", "--exclude", "cache/"]
        XCTAssertEqual(dryRun(filters), [
            "send photos/a.jpg (new)",
            "send photos/b.jpg (changed: size)",
            "skip photos/c.jpg (unchanged)",
            "skip photos/cache/ (excluded by --exclude 'cache/')",
            "send photos/caf\\xe9.jpg (new)",
            "skip photos/tmp/x.tmp (excluded by --exclude '*.tmp')",
            "dry run: 3 to send (3.5 KiB), 1 unchanged, 1 excluded, 1 directory excluded; nothing was queued",
        ])

        let objects = dryRun(filters, json: true).map { line -> [String: String] in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            XCTAssertNotNil(object, "not a JSON object of strings: \(line)")
            return object ?? [:]
        }
        XCTAssertEqual(objects, [
            ["path": "photos/a.jpg", "action": "send", "reason": "new"],
            ["path": "photos/b.jpg", "action": "send", "reason": "changed: size"],
            ["path": "photos/c.jpg", "action": "skip", "reason": "unchanged"],
            ["path": "photos/cache/", "action": "skip", "reason": "excluded by --exclude 'cache/'"],
            ["path": "photos/caf\u{EFE9}.jpg", "action": "send", "reason": "new"],  // the byte E9 (control-protocol.md)
            ["path": "photos/tmp/x.tmp", "action": "skip", "reason": "excluded by --exclude '*.tmp'"],
        ])

        XCTAssertEqual(try cli.batches().count, batchesBefore, "a dry run creates no batch")
        XCTAssertEqual(try cli.jobs().count, jobsBefore, "and no job")
        XCTAssertEqual(nginx.davPuts().count, putsBefore, "and sends nothing")

        // The backup itself then does what the dry run said.
        let result = try backupAndWait(filters)
        XCTAssertEqual(jsonInt(result["jobs"]), 3, "\(result)")
        XCTAssertEqual(Set(nginx.davPutRawPaths().dropFirst(putsBefore)),
                       ["backup/photos/a.jpg", "backup/photos/b.jpg", "backup/photos/caf%E9.jpg"])
        let after = dryRun(filters)
        XCTAssertEqual(after.filter { $0.hasPrefix("send ") }, [], after.joined(separator: "\n"))
        XCTAssertEqual(after.last, "dry run: 0 to send (0 B), 4 unchanged, 1 excluded, 1 directory excluded; nothing was queued")
    }

    /// A file queued by a backup still running is `already queued`; one whose upload was
    /// cancelled is sent again.
    func testDryRunSeesQueuedAndCancelledUploads() throws {
        try write("one.bin", size: 300 * KiB)
        try write("two.bin", size: 300 * KiB)
        // 1 byte/s: neither upload ends before it is cancelled.
        let result = try cli.backup(tree, to: nginx.davURL("backup"), ["--limit-rate", "1"])
        let batch = try XCTUnwrap(jsonInt(result["batch"]), "\(result)")
        XCTAssertEqual(dryRun([]), [
            "skip one.bin (already queued)",
            "skip two.bin (already queued)",
            "dry run: 0 to send (0 B), 2 already queued; nothing was queued",
        ])
        let jobs = try cli.jobs(batch: batch)
        let cancelled = cli.run(["cancel", "--batch", String(batch)])
        XCTAssertEqual(cancelled.exitCode, 0, cancelled.summary)
        for job in jobs { try cli.awaitState(try XCTUnwrap(job.id), "cancelled") }
        XCTAssertEqual(dryRun([]), [
            "send one.bin (last upload did not complete)",
            "send two.bin (last upload did not complete)",
            "dry run: 2 to send (600.0 KiB); nothing was queued",
        ])
    }

    /// A pattern given as bytes that are not UTF-8 matches a name with those bytes, and only it.
    func testAPatternThatIsNotUTF8MatchesThoseBytes() throws {
        let dir: [UInt8] = Array("dir".utf8) + [0xFF]
        let latin1 = dir + Array("/caf".utf8) + [0xE9] + Array(".txt".utf8)
        let utf8 = dir + Array("/café.txt".utf8)
        for name in [latin1, utf8] { try RawFiles.write(Files.randomData(count: 700), to: RawFiles.path(tree, name)) }
        let pattern: [UInt8] = Array("caf".utf8) + [0xE9] + Array("*".utf8)
        let words = ["--json", "backup", tree.path, "--to", nginx.davURL("backup"), "--exclude"].map { Array($0.utf8) }
        let result = cli.run(rawArguments: words + [pattern])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        let batch = try XCTUnwrap(jsonInt((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["batch"]),
                                  result.summary)
        XCTAssertEqual(cli.wait(batch: batch, timeout: 30).exitCode, 0)
        XCTAssertEqual(nginx.davPutRawPaths(), ["backup/dir%FF/caf%C3%A9.txt"], "only the UTF-8 name was sent")
    }

    func testBadRulesAreUsageErrors() throws {
        try write(["a.txt"])
        for (options, message) in [(["--exclude", "[abc"], "--exclude '[abc': '[' starts a character class that has no ']'"),
                                   (["--include", ""], "--include '': an empty pattern matches nothing"),
                                   (["--exclude-from", workDir.appendingPathComponent("missing").path],
                                    "--exclude-from: cannot read \(workDir.appendingPathComponent("missing").path)"),
                                   (["--exclude"], "--exclude needs a value")] {
            let result = cli.run(["backup", tree.path, "--to", nginx.davURL("backup")] + options)
            XCTAssertEqual(result.exitCode, 2, result.summary)
            assertOneLineMessage(result.stderr, "\(options)")
            XCTAssertTrue(result.stderr.contains(message), "\(options): \(result.stderr)")
        }
        XCTAssertEqual(try cli.batches().count, 0)
    }
}
