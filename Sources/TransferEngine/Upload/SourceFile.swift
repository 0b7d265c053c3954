#if canImport(Glibc)
import Glibc
#endif

/// A file to upload as it was when the job was queued: a later size or mtime, or another file
/// (device and inode) at its path, means it changed.
public struct SourceFile: Codable, Equatable, Sendable {
    /// A `RawPath`: its bytes are the file's name, UTF-8 or not.
    public var path: String
    public var size: Int64
    /// st_mtim in nanoseconds since the epoch.
    public var modified: Int64
    /// The file it was (nil in rows and clients from before it was recorded).
    public var device: UInt64?
    public var inode: UInt64?
    /// A symlink at `path` is refused, never followed (a backup's file: someone who can write in
    /// the tree could point it at `/etc/shadow`).
    public var refusesLinks: Bool

    public init(path: String, size: Int64, modified: Int64, device: UInt64? = nil, inode: UInt64? = nil,
                refusesLinks: Bool = false) {
        self.path = path
        self.size = size
        self.modified = modified
        self.device = device
        self.inode = inode
        self.refusesLinks = refusesLinks
    }

    /// Takes the snapshot now; nil with a reason when the path is not a readable regular file
    /// (with `refusingLinks`, also when it is a symlink, whatever it points at).
    public static func snapshot(_ path: String, refusingLinks: Bool = false) -> Result<SourceFile, TransferError> {
        var info = stat()
        let found = RawPath.withCString(path) { refusingLinks ? lstat($0, &info) : stat($0, &info) }
        guard found == 0 else { return .failure(.io(path: path, operation: "read", errno: errno)) }
        if refusingLinks, (info.st_mode & S_IFMT) == S_IFLNK {
            return .failure(.io(path: path, operation: "upload (a symbolic link: its target is not sent)", errno: 0))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(.io(path: path, operation: "upload (not a regular file)", errno: 0))
        }
        guard RawPath.withCString(path, { access($0, R_OK) }) == 0 else { return .failure(.io(path: path, operation: "read", errno: errno)) }
        guard NumericLimits.bytes.contains(Int64(info.st_size)) else {
            return .failure(.io(path: path, operation: "upload (larger than \(NumericLimits.bytes.range.upperBound) bytes)", errno: 0))
        }
        return .success(SourceFile(path: path, size: Int64(info.st_size), modified: modifiedNanoseconds(info),
                                   device: UInt64(info.st_dev), inode: UInt64(info.st_ino), refusesLinks: refusingLinks))
    }

    private enum CodingKeys: String, CodingKey { case path, size, modified, device, inode, refusesLinks }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        size = try container.decode(Int64.self, forKey: .size)
        modified = try Self.decodeModified(container, .modified)
        device = try container.decodeIfPresent(UInt64.self, forKey: .device)
        inode = try container.decodeIfPresent(UInt64.self, forKey: .inode)
        refusesLinks = try container.decodeIfPresent(Bool.self, forKey: .refusesLinks) ?? false
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(size, forKey: .size)
        try container.encode(FileTime.iso8601(nanoseconds: modified), forKey: .modified)
        try encodeIdentity(into: &container)
    }

    /// The identity fields, where they are known (a form part's object carries them too).
    func encodeIdentity<Key: CodingKey>(into container: inout KeyedEncodingContainer<Key>) throws {
        guard let device = Key(stringValue: "device"), let inode = Key(stringValue: "inode"),
              let links = Key(stringValue: "refusesLinks") else { return }
        try container.encodeIfPresent(self.device, forKey: device)
        try container.encodeIfPresent(self.inode, forKey: inode)
        if refusesLinks { try container.encode(true, forKey: links) }
    }

    /// A modification time as written (ISO 8601 to the nanosecond) or as rows and clients
    /// before that wrote it (nanoseconds since the epoch); absent: 0.
    static func decodeModified<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Int64 {
        if let nanoseconds = try? container.decodeIfPresent(Int64.self, forKey: key) { return nanoseconds }
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return 0 }
        guard let nanoseconds = FileTime.nanoseconds(iso8601: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an ISO 8601 time: \(text)")
        }
        return nanoseconds
    }

    /// Saturates: an mtime past the year 2262 (anyone can `touch -d 3000-01-01`) must not trap.
    static func modifiedNanoseconds(_ info: stat) -> Int64 {
        Int64(info.st_mtim.tv_sec).saturatingMultiply(1_000_000_000).saturatingAdd(Int64(info.st_mtim.tv_nsec))
    }
}

/// An open source file, checked against its snapshot. Owns the descriptor (closed in deinit).
/// Thread: opened on the store queue, read on the loop thread.
// @unchecked: a file descriptor read with pread (thread-safe); used by one thread at a time.
public final class SourceReader: @unchecked Sendable {
    public let source: SourceFile
    private let descriptor: Int32

    /// Opens the file and fails with `source_changed` when it no longer matches the snapshot.
    public init(_ source: SourceFile) throws(TransferError) {
        self.source = source
        let flags = O_RDONLY | O_CLOEXEC | (source.refusesLinks ? O_NOFOLLOW : 0)
        let fd = RawPath.withCString(source.path) { open($0, flags) }
        guard fd >= 0 else {
            if errno == ENOENT { throw .sourceChanged("\(source.path) was removed after the job was queued") }
            if errno == ELOOP, source.refusesLinks {
                throw .sourceChanged("\(source.path) was replaced by a symbolic link after the job was queued; its target is not sent")
            }
            throw .file(path: source.path, operation: "open", errno: errno)
        }
        descriptor = fd
        try verify()
    }

    deinit { close(descriptor) }

    /// Fails with `source_changed` when the file's size or mtime differ from the snapshot.
    public func verify() throws(TransferError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(path: source.path, operation: "stat", errno: errno) }
        let size = Int64(info.st_size)
        let modified = SourceFile.modifiedNanoseconds(info)
        if let device = source.device, let inode = source.inode, device != UInt64(info.st_dev) || inode != UInt64(info.st_ino) {
            throw .sourceChanged("\(source.path) is another file than the one queued (replaced after the job was queued)")
        }
        guard size == source.size else {
            throw .sourceChanged("\(source.path) changed after the job was queued (size \(source.size) → \(size) bytes)")
        }
        guard modified == source.modified else {
            throw .sourceChanged("\(source.path) was modified after the job was queued")
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; a file that ends early has changed.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(TransferError) -> Int {
        let wanted = Int(min(Int64(buffer.count), source.size - offset))
        guard wanted > 0 else { return 0 }
        while true {
            let count = pread(descriptor, buffer.baseAddress, wanted, off_t(offset))
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .io(path: source.path, operation: "read", errno: errno) }
            guard count > 0 else { throw .sourceChanged("\(source.path) became shorter while it was being sent") }
            return count
        }
    }
}
