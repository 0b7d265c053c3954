#if canImport(Glibc)
import Glibc
#endif

/// Writing whole strings to stdout and stderr without Foundation.
public enum FileHandle {
    case standardOutput, standardError

    public var descriptor: Int32 { self == .standardOutput ? 1 : 2 }

    public func write(_ text: String) {
        write(Array(text.utf8))
    }

    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }
}
