import Foundation
import XCTest

/// What the tus and S3 upload tests share: large random files, and interrupting a running
/// upload at given fractions of its size.
extension IntegrationTestCase {
    /// `size` random bytes (from /dev/urandom: no period a wrong offset could hide behind) in
    /// the work directory; returns the file and its sha256.
    func makeLargeFile(_ name: String, size: Int) throws -> (url: URL, sha256: String) {
        let url = workDir.appendingPathComponent(name)
        let result = cli.runner.run(URL(fileURLWithPath: "/bin/sh"),
                                    ["-c", "head -c \(size) /dev/urandom > '\(url.path)'"], timeout: 120)
        guard result.exitCode == 0, Files.size(url) == size else { throw HarnessError("cannot make \(name): \(result.summary)") }
        return (url, try cli.sha256(of: url))
    }

    /// A directory `tree` in the work directory holding `files` (relative paths) of random bytes,
    /// `size` plus the file's index each; returns it and each file's sha256.
    func makeTree(_ files: [String], size: Int) throws -> (url: URL, sha256: [String: String]) {
        let tree = workDir.appendingPathComponent("tree")
        var digests: [String: String] = [:]
        for (index, relative) in files.enumerated() {
            let url = tree.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Files.randomData(count: size + index).write(to: url)
            digests[relative] = try cli.sha256(of: url)
        }
        return (tree, digests)
    }

    /// Waits until job `id` is running with at least `fraction` of `size` moved, then runs `interrupt`;
    /// once for each fraction. Returns the bytes the job showed at each interruption.
    @discardableResult
    func interrupt(_ id: Int, size: Int, at fractions: [Double], timeout: TimeInterval = 120,
                   _ interrupt: (Double) throws -> Void) throws -> [Int] {
        var shown: [Int] = []
        for fraction in fractions {
            let wanted = Int(Double(size) * fraction)
            let job = try cli.awaitJSON("job \(id)", "running with bytesDone >= \(wanted)", timeout: timeout, interval: 0.01,
                                        fetch: { try cli.job(id) }) { job in
                guard job.state == "running", let done = job.bytesDone else { return false }
                return done >= wanted
            }
            XCTAssertLessThan(job.bytesDone ?? size, size, "the upload ended before \(Int(fraction * 100)) % could be interrupted")
            shown.append(job.bytesDone ?? 0)
            try interrupt(fraction)
        }
        return shown
    }
}
