import Foundation
import XCTest

/// Downloads into a directory (`-o DIR/`, `-o DIR`, `-O`, a manifest's `outputDir`): named by
/// the server's Content-Disposition, else the final URL's last segment, made safe; what happens
/// when the name is taken (`--on-exists`); the name kept across a pause.
final class ServerNamedDownloadTests: IntegrationTestCase {
    override class var slowRate: String { "1m" }

    private func directory(_ name: String) throws -> URL {
        let url = workDir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func queue(_ url: String, into output: String, _ options: [String] = []) throws -> Int {
        let result = cli.run(["download", url, "-o", output] + options)
        guard result.exitCode == 0, let id = Int(result.trimmedStdout) else { throw HarnessError("download failed: \(result.summary)") }
        return id
    }

    func testTheServersNameOrTheURLsMadeSafeInTheDirectoryGiven() throws {
        let sha = try makeSource("src.bin", size: 300 * KiB)
        try makeSource("My File.bin", size: 10 * KiB)
        let into = try directory("into")
        let cases: [(url: String, output: String, name: String)] = [
            (nginx.url(.named, "src.bin"), into.path + "/", "report 2026.pdf"),
            (nginx.url(.namedUTF8, "src.bin"), into.path, "€ rates.txt"),  // an existing directory, no slash
            (nginx.url(.namedEvil, "src.bin"), into.path + "/", "evil.bashrc"),
            (nginx.url(.files, "My%20File.bin") + "?token=1", into.path + "/", "My File.bin"),
        ]
        for (url, output, name) in cases {
            let id = try queue(url, into: output)
            try waitCompleted(id)
            let job = try cli.job(id)
            XCTAssertEqual(job["path"] as? String, into.appendingPathComponent(name).path, job.jsonText)
            XCTAssertEqual(job["outputDir"] as? String, into.path, job.jsonText)
            if name != "My File.bin" {
                XCTAssertEqual(try cli.sha256(of: into.appendingPathComponent(name)), sha, name)
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: into.path).sorted()
        XCTAssertEqual(names, ["My File.bin", "evil.bashrc", "report 2026.pdf", "€ rates.txt"], "nothing else, no partial file left")
        XCTAssertFalse(FileManager.default.fileExists(atPath: workDir.appendingPathComponent("evil").path), "never outside")

        // -O: the current directory of the command.
        let here = try directory("here")
        let runner = try CommandRunner(scratch: workDir.appendingPathComponent("runner"))
        let command = "cd '\(here.path)' && exec '\(binaries.transferctl.path)' --state-dir '\(daemon.stateDir.path)' "
            + "download '\(nginx.url(.named, "src.bin"))' -O"
        let result = runner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], timeout: 20)
        let id = try XCTUnwrap(Int(result.trimmedStdout), result.summary)
        try waitCompleted(id)
        XCTAssertEqual(try cli.sha256(of: here.appendingPathComponent("report 2026.pdf")), sha)
    }

    func testATakenNameFailsOrIsReplacedOrRenamedAsAsked() throws {
        try makeSource("src.bin", size: 64 * KiB)
        let into = try directory("taken")
        let existing = into.appendingPathComponent("report 2026.pdf")
        try Data("mine".utf8).write(to: existing)

        let refused = try queue(nginx.url(.named, "src.bin"), into: into.path + "/")
        let failed = try cli.awaitState(refused, "failed")
        XCTAssertEqual(failed.errorCode, "io", failed.jsonText)
        XCTAssertTrue(failed.errorMessage?.contains("already exists") == true, failed.jsonText)
        XCTAssertEqual(failed.attempts, 1, "not retried: \(failed.jsonText)")
        XCTAssertEqual(try String(contentsOf: existing, encoding: .utf8), "mine", "untouched")

        let renamed = try queue(nginx.url(.named, "src.bin"), into: into.path + "/", ["--on-exists", "rename"])
        try waitCompleted(renamed)
        XCTAssertEqual(try cli.job(renamed)["path"] as? String, into.appendingPathComponent("report 2026 (1).pdf").path)
        let again = try queue(nginx.url(.named, "src.bin"), into: into.path + "/", ["--on-exists", "rename"])
        try waitCompleted(again)
        XCTAssertEqual(try cli.job(again)["path"] as? String, into.appendingPathComponent("report 2026 (2).pdf").path)
        XCTAssertEqual(try String(contentsOf: existing, encoding: .utf8), "mine")

        let replaced = try queue(nginx.url(.named, "src.bin"), into: into.path + "/", ["--on-exists", "overwrite"])
        try waitCompleted(replaced)
        XCTAssertEqual(try Data(contentsOf: existing).count, 64 * KiB, "replaced")

        // -o FILE with rename takes the next free name when queued.
        let file = try queue(nginx.url(.files, "src.bin"), into: existing.path, ["--on-exists", "rename"])
        try waitCompleted(file)
        XCTAssertEqual(try cli.job(file)["path"] as? String, into.appendingPathComponent("report 2026 (3).pdf").path)
        let usage = cli.run(["download", nginx.url(.files, "src.bin"), "-o", into.path + "/", "--on-exists", "never"])
        XCTAssertEqual(usage.exitCode, 2, usage.summary)
    }

    func testTheNameIsShownOnceTheAnswerCameAndKeptAcrossAPause() throws {
        let size = 3 * MiB
        let sha = try makeSource("big.bin", size: size)
        let into = try directory("slow")
        let id = try queue(nginx.url(.namedSlow, "big.bin"), into: into.path + "/")
        let running = try awaitProgress(id, atLeast: 128 * KiB, total: size)
        XCTAssertEqual(running["path"] as? String, into.appendingPathComponent("report 2026.pdf").path, running.jsonText)
        XCTAssertEqual(cli.run(["pause", String(id)]).exitCode, 0)
        try cli.awaitState(id, "paused")
        let show = cli.run(["show", String(id)])
        XCTAssertTrue(show.stdout.contains("report 2026.pdf"), show.stdout)
        XCTAssertEqual(cli.run(["resume", String(id)]).exitCode, 0)
        try waitCompleted(id)
        XCTAssertEqual(try cli.sha256(of: into.appendingPathComponent("report 2026.pdf")), sha)
        let log = try String(contentsOf: nginx.accessLog, encoding: .utf8)
        XCTAssertTrue(log.contains("|206|"), "the second attempt continued with a Range: \(log)")
    }

    func testAManifestLineMayGiveADirectory() throws {
        let sha = try makeSource("m.bin", size: 32 * KiB)
        let into = try directory("manifest")
        let lines = [manifestLine(key: "a", download: ["url": nginx.url(.named, "m.bin"), "outputDir": into.path]),
                     manifestLine(key: "b", download: ["url": nginx.url(.files, "m.bin"), "outputDir": into.path])]
        let manifest = try cli.writeManifest(lines, to: workDir.appendingPathComponent("m.jsonl"))
        let batch = try XCTUnwrap(jsonInt(try cli.submit(manifest)["batch"]))
        XCTAssertEqual(cli.wait(batch: batch).exitCode, 0)
        XCTAssertEqual(try cli.sha256(of: into.appendingPathComponent("report 2026.pdf")), sha)
        XCTAssertEqual(try cli.sha256(of: into.appendingPathComponent("m.bin")), sha)
        let both = [manifestLine(key: nil, download: ["url": nginx.url(.files, "m.bin"), "outputDir": into.path,
                                                      "output": into.appendingPathComponent("x").path])]
        let refused = cli.run(["batch", "submit", try cli.writeManifest(both, to: workDir.appendingPathComponent("b.jsonl")).path])
        XCTAssertEqual(refused.exitCode, 2, refused.summary)
        XCTAssertTrue(refused.stderr.contains("not both"), refused.summary)
    }
}
