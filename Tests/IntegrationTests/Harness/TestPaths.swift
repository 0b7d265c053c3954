import Foundation

/// Where the built `transferd` and `transferctl` live.
struct Binaries {
    let transferd: URL
    let transferctl: URL

    /// `$TRANSFERD_BIN_DIR` if set, else the first directory on the parent chain of the test
    /// runner (`CommandLine.arguments[0]`) that holds both executables. On Linux the
    /// `*PackageTests.xctest` runner sits next to them in `.build/<triple>/debug/`.
    static func locate() throws -> Binaries {
        let fm = FileManager.default
        func binaries(in dir: URL) -> Binaries? {
            let d = dir.appendingPathComponent("transferd")
            let c = dir.appendingPathComponent("transferctl")
            guard fm.isExecutableFile(atPath: d.path), fm.isExecutableFile(atPath: c.path) else { return nil }
            return Binaries(transferd: d, transferctl: c)
        }
        if let explicit = ProcessInfo.processInfo.environment["TRANSFERD_BIN_DIR"], !explicit.isEmpty {
            if let found = binaries(in: URL(fileURLWithPath: explicit)) { return found }
            throw HarnessError("TRANSFERD_BIN_DIR=\(explicit) does not contain executable transferd and transferctl")
        }
        let cwd = URL(fileURLWithPath: fm.currentDirectoryPath)
        var dir = URL(fileURLWithPath: CommandLine.arguments[0], relativeTo: cwd).standardizedFileURL
        var searched: [String] = []
        while dir.path != "/" && !dir.path.isEmpty {
            dir = dir.deletingLastPathComponent()
            searched.append(dir.path)
            if let found = binaries(in: dir) { return found }
        }
        throw HarnessError("transferd/transferctl not found; set TRANSFERD_BIN_DIR or run via `swift test`. "
            + "Searched: \(searched.joined(separator: ", "))")
    }
}

/// Short temporary directories: the control socket lives inside them and Unix socket
/// paths are limited to ~104 bytes.
enum TempDirectory {
    static func make(prefix: String = "tdit") throws -> URL {
        let base = FileManager.default.fileExists(atPath: "/tmp") ? "/tmp" : NSTemporaryDirectory()
        let token = UUID().uuidString.prefix(8).lowercased()
        let url = URL(fileURLWithPath: base).appendingPathComponent("\(prefix)-\(token)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

enum Files {
    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    static func size(_ url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size].flatMap { ($0 as? NSNumber)?.intValue }
    }

    static func isRegularFile(_ url: URL) -> Bool {
        guard let type = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
        else { return false }
        return type == .typeRegular
    }

    /// Names in a directory (including dot files).
    static func contents(of dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }

    static func randomData(count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            let words = count / 8
            let wordPtr = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for i in 0..<words {
                var value = generator.next()
                withUnsafeBytes(of: &value) { bytes in
                    for j in 0..<8 { wordPtr[i * 8 + j] = bytes[j] }
                }
            }
            for i in (words * 8)..<count { wordPtr[i] = UInt8.random(in: 0...255, using: &generator) }
        }
        return data
    }

    /// SHA-256 (lowercase hex) via /usr/bin/sha256sum.
    static func sha256(of url: URL, using runner: CommandRunner) throws -> String {
        let tool = ["/usr/bin/sha256sum", "/bin/sha256sum"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else { throw HarnessError("sha256sum not found") }
        let result = runner.run(URL(fileURLWithPath: tool), [url.path], timeout: 30)
        guard result.exitCode == 0, let hex = result.trimmedStdout.split(separator: " ").first else {
            throw HarnessError("sha256sum failed: \(result.summary)")
        }
        return String(hex)
    }

    /// Path transferd uses for bytes in flight: `<dir>/.<name>.transferd-part`.
    static func partialPath(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).transferd-part")
    }
}
