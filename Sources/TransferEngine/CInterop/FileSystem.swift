import CTransferSupport

/// File-system calls that Glibc does not expose to Swift.
enum FileSystem {
    /// renameat2 of `from` to `to`, each relative to its directory (a descriptor or AT_FDCWD).
    /// Not `replacing`: RENAME_NOREPLACE, -1 with errno EEXIST instead of replacing `to`.
    static func rename(_ from: (directory: Int32, name: UnsafePointer<CChar>), to: (directory: Int32, name: UnsafePointer<CChar>),
                       replacing: Bool) -> Int32 {
        tds_rename_at(from.directory, from.name, to.directory, to.name, replacing ? 1 : 0)
    }

    /// A new file without a name in `directory` (O_TMPFILE), its descriptor or -1 with errno.
    static func openUnnamed(in directory: UnsafePointer<CChar>, mode: mode_t) -> Int32 {
        tds_open_unnamed(directory, mode)
    }

    /// Names the file `openUnnamed` made, open as `descriptor`: `to`, relative to its directory
    /// (a descriptor or AT_FDCWD). -1 with errno EEXIST when something is there.
    static func link(_ descriptor: Int32, to: (directory: Int32, name: UnsafePointer<CChar>)) -> Int32 {
        tds_link_unnamed(descriptor, to.directory, to.name)
    }

    /// sync_file_range(SYNC_FILE_RANGE_WRITE) over `length` bytes from `offset` (0: to the end).
    static func startWriteback(_ descriptor: Int32, offset: Int64 = 0, length: Int64 = 0) -> Int32 {
        tds_start_writeback(descriptor, offset, length)
    }

    /// syncfs(2) of the file system `descriptor` is on.
    static func syncFileSystem(_ descriptor: Int32) -> Int32 {
        tds_syncfs(descriptor)
    }

    /// The type (`f_type`) of the file system `descriptor` is on, nil when fstatfs fails.
    static func fileSystemType(_ descriptor: Int32) -> Int64? {
        let type = tds_file_system_type(descriptor)
        return type < 0 ? nil : Int64(type)
    }

    /// The uid of the peer of a connected Unix socket, or nil.
    static func peerUID(_ socket: Int32) -> UInt32? {
        var uid: uid_t = 0
        return tds_peer_uid(socket, &uid) == 0 ? uid : nil
    }
}
