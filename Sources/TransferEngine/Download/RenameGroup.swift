import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The last step of finishing downloads, done for many files at once: files whose bytes are
/// synced (and verified) are renamed into place, then each directory they went to is fsynced
/// once, then each is answered. Renames that arrive while a group is being made durable form
/// the next group, as the store's group commit does for records. The order of durability of
/// each file is kept: bytes synced, then renamed, then its directory entry synced, and only
/// then is its job recorded completed. Thread: any; groups run on one serial queue.
final class RenameGroup: Sendable {
    struct Rename: Sendable {
        var file: PartialFile
        var destination: String
        var replacing: Bool
        var mode: mode_t
        var done: @Sendable (Result<Void, TransferError>) -> Void
    }

    private let queue = DispatchQueue(label: "transferd.rename")
    private let pending = Mutex<[Rename]>([])

    /// Renames `file` into place as part of the next group; `done` once its directory is synced.
    func rename(_ file: PartialFile, to destination: String, replacing: Bool, mode: mode_t,
                done: @escaping @Sendable (Result<Void, TransferError>) -> Void) {
        let first = pending.withLock { renames in
            renames.append(Rename(file: file, destination: destination, replacing: replacing, mode: mode, done: done))
            return renames.count == 1
        }
        if first { queue.async { [self] in drain() } }
    }

    private func drain() {
        let group = pending.withLock { renames in
            defer { renames.removeAll(keepingCapacity: true) }
            return renames
        }
        var results: [Result<Void, TransferError>] = []
        results.reserveCapacity(group.count)
        var directories: [String] = []
        var seen = Set<String>()
        for rename in group {
            let result = Result { () throws(TransferError) in
                try rename.file.moveIntoPlace(rename.destination, replacing: rename.replacing, mode: rename.mode,
                                              syncingDirectory: false)
            }
            if case .success = result {
                let directory = PartialFile.directory(of: rename.destination)
                if seen.insert(directory).inserted { directories.append(directory) }
            }
            results.append(result)
        }
        for directory in directories { PartialFile.syncDirectory(directory) }
        for (rename, result) in zip(group, results) { rename.done(result) }
    }
}
