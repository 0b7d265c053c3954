#if canImport(Glibc)
import Glibc
#endif

/// What tells one version of a file from another without reading it: the inode it is, its size
/// and its modification time (to the nanosecond). Recorded for a partial file with every
/// checkpoint, compared before its bytes are continued.
public struct FileIdentity: Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modifiedNanoseconds: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    init(_ info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                  modifiedNanoseconds: Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
    }

    /// What is at `path` (a symlink not followed), nil when nothing is.
    init?(at path: String) {
        var info = stat()
        guard RawPath.withCString(path, { lstat($0, &info) }) == 0 else { return nil }
        self.init(info)
    }

    /// The same file (not a replacement at the same path).
    func isSameFile(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode
    }
}
