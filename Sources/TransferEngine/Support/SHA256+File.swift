#if canImport(Glibc)
import Glibc
#endif

extension SHA256 {
    /// The hex digest of the first `length` bytes of an open file, read with pread in 1 MiB
    /// chunks; on failure the errno (EIO when the file is shorter than `length`).
    public static func hexDigest(ofDescriptor descriptor: Int32, length: Int64) -> Result<String, SystemErrno> {
        var hash = SHA256()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < length {
            let count = pread(descriptor, buffer.baseAddress, min(chunk, Int(length - offset)), off_t(offset))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return .failure(SystemErrno(code: count < 0 ? errno : EIO)) }
            hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
        }
        return .success(hash.finalizeHex())
    }
}

/// An errno value as an Error.
public struct SystemErrno: Error, Equatable, Sendable {
    public var code: Int32
    public var message: String { SystemError.describe(code) }
}
