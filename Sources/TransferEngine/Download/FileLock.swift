#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One holder of an exclusive `flock(2)` on a partial file, so that two processes (two daemons
/// with different state directories) never write one file: the second is told it is busy.
/// Within this process the lock is shared: a new attempt may open the file while the previous
/// attempt's last sync still holds it, and a second flock would refuse us. The lock lives on a
/// duplicate of the first holder's descriptor, closed (releasing the lock) with its last holder.
final class FileLock: Sendable {
    private struct Key: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// The locks this process holds, by inode: the locked descriptor and how many hold it.
    private static let held = Mutex<[Key: (descriptor: Int32, holders: Int)]>([:])

    private let key: Key

    private init(key: Key) {
        self.key = key
    }

    deinit {
        Self.held.withLock { held in
            guard var entry = held[key] else { return }
            entry.holders -= 1
            if entry.holders > 0 {
                held[key] = entry
            } else {
                close(entry.descriptor)
                held[key] = nil
            }
        }
    }

    /// Holds the lock on the file open as `descriptor` (its device and inode as `identity` tells
    /// them): taken now, or shared with its holders in this process. `busy` when another
    /// process holds it.
    static func acquire(_ descriptor: Int32, _ identity: FileIdentity, path: String) throws(TransferError) -> FileLock {
        let key = Key(device: identity.device, inode: identity.inode)
        let failure: TransferError? = held.withLock { held in
            if var entry = held[key] {
                entry.holders += 1
                held[key] = entry
                return nil
            }
            let duplicate = dup(descriptor)
            guard duplicate >= 0 else { return PartialFile.error(path: path, operation: "lock", errno: errno) }
            guard flock(duplicate, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                close(duplicate)
                return code == EWOULDBLOCK ? .busy(path: path) : PartialFile.error(path: path, operation: "lock", errno: code)
            }
            held[key] = (duplicate, 1)
            return nil
        }
        if let failure { throw failure }
        return FileLock(key: key)
    }
}
