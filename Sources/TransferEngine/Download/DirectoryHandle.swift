#if canImport(Glibc)
import Glibc
#endif

/// An open directory, whose entries (a rename into it) `sync` makes durable. A finishing group
/// opens the directories of its files before it renames anything: a shortage of descriptors
/// then fails a file while it can still be tried again as it was, never after its rename.
/// Owns its descriptor. Thread: the one that opened it.
final class DirectoryHandle {
    let path: String
    private let descriptor: Int32

    init(_ path: String) throws(TransferError) {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw .file(path: path, operation: "open the directory", errno: errno) }
        self.path = path
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Makes the directory's entries durable.
    func sync() throws(TransferError) {
        guard fsync(descriptor) == 0 else { throw .file(path: path, operation: "sync the directory", errno: errno) }
    }
}
