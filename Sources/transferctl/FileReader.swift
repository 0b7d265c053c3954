#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// Reads a file (resume data, header files, manifests) or stdin whole, up to a limit.
enum FileReader {
    static func contents(of path: String, limit: Int = 16 << 20) -> [UInt8]? {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return readAll(fd, limit: limit)
    }

    static func standardInput(limit: Int) -> [UInt8]? {
        readAll(STDIN_FILENO, limit: limit)
    }

    private static func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while result.count <= limit {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return result }
            result.append(contentsOf: buffer[0..<count])
        }
        return nil
    }
}
