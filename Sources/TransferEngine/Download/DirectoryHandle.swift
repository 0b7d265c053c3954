#if canImport(Glibc)
import Glibc
#endif

/// An open directory, whose entries (a rename into it) `sync` makes durable. A finishing group
/// opens the directories of its files before it renames anything: a shortage of descriptors
/// then fails a file while it can still be tried again as it was, never after its rename.
/// Owns its descriptor. Thread: the one that opened it.
final class DirectoryHandle {
    let path: String
    /// The file system the directory is on (`st_dev`).
    let device: UInt64
    private let descriptor: Int32

    init(_ path: String) throws(TransferError) {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw .file(path: path, operation: "open the directory", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .file(path: path, operation: "open the directory", errno: code)
        }
        self.path = path
        device = UInt64(info.st_dev)
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Makes the directory's entries durable.
    func sync() throws(TransferError) {
        guard fsync(descriptor) == 0 else { throw .file(path: path, operation: "sync the directory", errno: errno) }
    }

    /// Renames `from` to `to`, both paths of entries in this directory, through its descriptor:
    /// the kernel walks neither path again, and the entry lands in the directory that `sync`
    /// makes durable even if a component of its path was swapped meanwhile. Not `replacing`:
    /// fails with EEXIST rather than replace `to`. 0, or -1 with errno.
    func rename(_ from: String, to: String, replacing: Bool) -> Int32 {
        at(from) { fromDirectory, from in
            at(to) { toDirectory, to in FileSystem.rename((fromDirectory, from), to: (toDirectory, to), replacing: replacing) }
        }
    }

    /// Links the file without a name open as `file` (`PartialFile.unnamed`) to `to`, an entry of
    /// this directory, through its descriptor (as `rename`); fails with EEXIST rather than
    /// replace anything. 0, or -1 with errno.
    func link(_ file: Int32, to: String) -> Int32 {
        at(to) { directory, name in FileSystem.link(file, to: (directory, name)) }
    }

    /// Removes `path`, an entry of this directory, when it is the file `identity` tells (not
    /// another put there since); 0, or -1 with errno (ESTALE: it is another file).
    func remove(_ path: String, ifItIs identity: FileIdentity) -> Int32 {
        guard existing(path)?.isFile(identity) == true else {
            errno = ESTALE
            return -1
        }
        return at(path) { directory, name in unlinkat(directory, name, 0) }
    }

    /// What is at `path`, an entry of this directory, as `PartialFile.existing(at:)` tells it (a
    /// symlink is not followed), nil when nothing is.
    func existing(_ path: String) -> PartialFile.Existing? {
        var info = stat()
        guard at(path, { directory, name in fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else { return nil }
        return PartialFile.Existing(info)
    }

    /// Calls `body` with this directory's descriptor and the name of `path` in it; a path that is
    /// not in this directory (never one of a finishing group's) is passed whole, from the
    /// working directory.
    private func at(_ path: String, _ body: (Int32, UnsafePointer<CChar>) -> Int32) -> Int32 {
        guard let (directory, name) = PartialFile.split(path), directory == self.path else {
            return RawPath.withCString(path) { body(AT_FDCWD, $0) }
        }
        return RawPath.withCString(String(name)) { body(descriptor, $0) }
    }
}
