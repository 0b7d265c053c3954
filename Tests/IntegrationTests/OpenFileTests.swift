import Foundation
import XCTest

/// Once a job has ended, the daemon holds none of its files open (issue 61, item 2): a finished
/// download kept its inode open until the next download, so `umount` of a USB stick failed and
/// deleting the file freed no space.
final class OpenFileTests: IntegrationTestCase {
    /// The daemon's descriptors that point at a file under `directory` (an unnamed file linked into
    /// place shows as `#INODE (deleted)` there).
    private func openFiles(under directory: URL) -> [String] {
        guard let pid = daemon.child?.pid,
              let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return [] }
        return entries.compactMap { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(entry)") else { return nil }
            return target.hasPrefix(directory.path) ? target : nil
        }
    }

    func testAFinishedDownloadLeavesNoDescriptorOpen() throws {
        for index in 0..<8 {
            let size = (index % 2 == 0 ? 100 * KiB : 6 * MiB) + index
            let sha = try makeSource("f\(index).bin", size: size)
            let dest = destination("f\(index).bin")
            let id = try cli.download(nginx.url(.files, "f\(index).bin"), to: dest)
            try waitCompleted(id)
            try assertCompletedDownload(id, at: dest, sha256: sha, size: size)
            // (a finishing group lets go of its files just after it answers its jobs)
            let held = poll(timeout: 2) { self.openFiles(under: self.downloads).isEmpty }
            var info = stat()
            _ = stat(dest.path, &info)
            XCTAssertTrue(held, "after download \(index) (inode \(info.st_ino)) the daemon still holds \(openFiles(under: downloads))")
        }
    }
}
