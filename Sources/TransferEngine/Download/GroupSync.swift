/// How a finishing group makes its files durable. Each file fdatasynced (side by side) costs a
/// device flush and an inode write per file; one `syncfs` of the file system they share writes
/// them all back and flushes once (2,000 × 64 KiB here: 0.26 s of system time fdatasynced one
/// by one on 16 threads, 0.11 s with one syncfs, the writes included). But a syncfs also waits
/// for every other dirty page of that file system, so it is chosen only where it is cheap and
/// known to be as durable as an fdatasync. Pure; unit-tested.
enum GroupSync {
    /// File systems whose syncfs writes back and flushes like fsync does (ext4, XFS, btrfs).
    /// Elsewhere (FUSE, network file systems) a syncfs may not reach the backing store.
    static let trustedFileSystems: Set<Int64> = [0xEF53, 0x5846_5342, 0x9123_683E]
    /// Fewer files than this on one file system are fdatasynced: a syncfs pays off over many.
    static let minimumFiles = 4
    /// Above this much dirty and in-writeback memory in the whole system, a syncfs could wait
    /// for other writers' gigabytes: the group's files are fdatasynced instead.
    static let dirtyLimit: Int64 = 64 << 20

    /// Whether the `files` of one group that are on a file system of `type` are made durable by
    /// one syncfs of it, given how many bytes the system has dirty or in writeback (nil:
    /// unknown).
    static func syncsWholeFileSystem(type: Int64?, files: Int, dirtyBytes: Int64?) -> Bool {
        guard let type, let dirtyBytes else { return false }
        return trustedFileSystems.contains(type) && files >= minimumFiles && dirtyBytes <= dirtyLimit
    }
}
