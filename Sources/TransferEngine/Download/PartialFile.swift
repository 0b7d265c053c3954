import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The file a download writes into before it is complete. Owns the descriptor (closed in deinit)
/// and holds the file's lock while it has a name. A download's first attempt makes it without
/// one (`unnamed`): it is named at `path` only when its bytes are to outlive the daemon (a
/// checkpoint, a stop), or linked straight to its destination when it is complete. Thread:
/// writes on the loop thread, except the last bytes of a complete body, kept by `writeLater`
/// for the thread that finishes the file; sync, truncate and read on the file queue.
// @unchecked: a file descriptor; pwrite/fdatasync/ftruncate are thread-safe system calls and
// the engine never writes from two threads at once (`deferred` hands its bytes to one writer).
public final class PartialFile: @unchecked Sendable {
    public let path: String
    /// The file system the file is on (`st_dev`).
    let device: UInt64
    private let descriptor: Int32
    /// A file at `path` that this daemon's user did not own alone (another owner, other links,
    /// not a regular file) was removed and a new one created: nothing of it was trusted.
    public let replacedForeignFile: Bool
    /// The file as it was opened (locked since: nothing of transferd's changed it meanwhile
    /// unless this object did).
    let openedAs: FileIdentity
    /// Where the file can be found by name.
    private enum Naming {
        /// Nowhere: its bytes go with its descriptor.
        case unnamed
        /// At `path`, under its lock.
        case named(FileLock)
        /// At its destination, linked there while it had no name: its inode's new link count is
        /// durable only once the file, or its whole file system, is synced again.
        case linkedIntoPlace
    }
    private let naming: Mutex<Naming>
    /// The file's permission bits as this object last set them: a file without a name is made
    /// with its destination's (nobody can open it by a path), a named one is owner-only.
    private let permissions: Atomic<UInt32>
    /// The last bytes of a complete body, kept by `writeLater` until a finishing thread writes
    /// them, or why that failed.
    private enum DeferredWrite {
        case none
        case kept([UInt8], at: Int64)
        /// A thread is writing them, outside the lock; the threads that called meanwhile wait
        /// for it, each on its own semaphore.
        case writing(waiters: [DispatchSemaphore])
        case failed(TransferError)
    }

    /// Bytes `writeLater` kept, and where they go (written before anything syncs, reads or
    /// renames the file), or why writing them failed.
    private let deferred = Mutex<DeferredWrite>(.none)
    /// Bytes kept by `writeLater` in all files, and the most they may be: finishing groups that
    /// fall behind make the loop write again rather than hold an unbounded backlog in memory.
    private static let deferredTotal = Atomic<Int>(0)
    static let deferredLimit = 32 << 20

    /// `<dir>/.<name>.transferd-part`: hidden, beside the destination, same filesystem.
    public static func partialPath(for destination: String) -> String {
        let name = RawPath.lastSlash(in: destination).map { destination.utf8.index(after: $0) } ?? destination.startIndex
        return "\(destination[..<name]).\(destination[name...]).transferd-part"
    }

    /// `<dir>/.transferd-job-<id>.transferd-part`: the partial file of a download whose name the
    /// server gives, named before that is known.
    public static func partialPath(in directory: String, job: JobID) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + ".transferd-job-\(job).transferd-part"
    }

    /// A partial file's mode until it is moved into place.
    static let ownerOnly: mode_t = 0o600

    /// Opens (creating it owner-only, and the directories it needs with `directoryMode`) without
    /// following a symlink planted at `path`, and takes its lock (`busy` when another process
    /// holds it). A file someone else planted there is never adopted: it is replaced by a new,
    /// empty one (O_EXCL, so a race fails instead). The finished file gets its final mode when
    /// it is moved into place.
    public convenience init(path: String, directoryMode: mode_t = 0o755) throws(TransferError) {
        let create = { RawPath.withCString(path) { open($0, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_CREAT, Self.ownerOnly) } }
        var fd = create()
        // Its directories are made only when missing: a mkdir of each one for every file would
        // cost a batch of small files one failing system call per path component per file.
        if fd < 0, errno == ENOENT {
            try Self.createDirectories(for: path, mode: directoryMode)
            fd = create()
        }
        guard fd >= 0 else { throw Self.error(path: path, operation: "create", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw Self.error(path: path, operation: "inspect", errno: code)
        }
        let replacedForeignFile = !Self.isOurs(info)
        if replacedForeignFile {
            close(fd)
            guard RawPath.withCString(path, { unlink($0) }) == 0 || errno == ENOENT else {
                throw Self.error(path: path, operation: "remove", errno: errno)
            }
            fd = RawPath.withCString(path) { open($0, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_CREAT | O_EXCL, Self.ownerOnly) }
            guard fd >= 0, fstat(fd, &info) == 0 else {
                let code = errno
                if fd >= 0 { close(fd) }
                throw Self.error(path: path, operation: "create", errno: code)
            }
        }
        let lock: FileLock
        do {
            lock = try FileLock.acquire(fd, FileIdentity(info), path: path)
        } catch {
            close(fd)
            throw error
        }
        self.init(path: path, descriptor: fd, info: info, naming: .named(lock), replacedForeignFile: replacedForeignFile)
    }

    /// A new, empty file for `path` without a name yet (O_TMPFILE in its directory, created with
    /// `directoryMode` when missing): no directory entry is looked up, made or removed for it
    /// until it is linked into place, and a crash leaves nothing of it behind. It is made with
    /// `mode`, its destination's, which its link then needs no `fchmod` for. `sync` names it at
    /// `path` (owner-only) when its bytes are to be kept. Where the file system has no such
    /// files: the file at `path`, as `init(path:directoryMode:)` opens it.
    static func unnamed(path: String, directoryMode: mode_t = 0o755, mode: mode_t = ownerOnly) throws(TransferError)
        -> PartialFile {
        let directory = directory(of: path)
        let create = { RawPath.withCString(directory) { FileSystem.openUnnamed(in: $0, mode: mode) } }
        var fd = create()
        if fd < 0, errno == ENOENT {
            try createDirectories(for: path, mode: directoryMode)
            fd = create()
        }
        guard fd >= 0 else {
            guard errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL else {
                throw error(path: path, operation: "create", errno: errno)
            }
            return try PartialFile(path: path, directoryMode: directoryMode)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw error(path: path, operation: "inspect", errno: code)
        }
        return PartialFile(path: path, descriptor: fd, info: info, naming: .unnamed, replacedForeignFile: false)
    }

    private init(path: String, descriptor: Int32, info: stat, naming: Naming, replacedForeignFile: Bool) {
        self.path = path
        self.descriptor = descriptor
        device = UInt64(info.st_dev)
        openedAs = FileIdentity(info)
        self.naming = Mutex(naming)
        permissions = Atomic(UInt32(info.st_mode & 0o7777))
        self.replacedForeignFile = replacedForeignFile
    }

    deinit {
        try? writeDeferred()  // bytes received are kept, whoever lets go of the file last
        close(descriptor)
    }

    /// A regular file owned by this process's user, with no other name.
    private static func isOurs(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && info.st_nlink == 1
    }

    /// The file as it is now: inode, size, modification time.
    public var identity: FileIdentity? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return FileIdentity(info)
    }

    public var size: Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return 0 }
        return Int64(info.st_size)
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(TransferError) {
        var done = 0
        while done < bytes.count {
            let count = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.error(path: path, operation: "write", errno: errno)
            }
            done += count
        }
    }

    /// Keeps `bytes` to be written at `offset` by `writeDeferred` (called first by `sync`,
    /// `sha256` and `moveIntoPlace`): the last bytes of a complete body are written on the
    /// thread that finishes the file instead of the loop thread. False, keeping nothing, when
    /// the bytes kept by all files would pass `deferredLimit`: the caller writes them itself.
    func writeLater(_ bytes: [UInt8], at offset: Int64) -> Bool {
        let total = Self.deferredTotal.add(bytes.count, ordering: .relaxed).newValue
        guard total <= Self.deferredLimit else {
            Self.deferredTotal.subtract(bytes.count, ordering: .relaxed)
            return false
        }
        deferred.withLock { state in
            guard case .none = state else { preconditionFailure("one write kept at a time") }
            state = .kept(bytes, at: offset)
        }
        return true
    }

    /// Writes the bytes `writeLater` kept, if any. They are let go of either way; a failure
    /// is kept, and every later call fails with it (the finish fails, and the next attempt
    /// finds the file short of its recorded length). A call on another thread meanwhile
    /// returns only once the bytes are written. It sleeps until then: the lock is not held
    /// during the write, because a thread blocked on Swift's `Mutex` (a priority-inheriting
    /// futex) spins in the kernel while the holder runs, and a finishing group waiting so for
    /// the writer's page-cache copies burnt 6–7 % of the daemon's CPU (BENCHMARKS.md).
    func writeDeferred() throws(TransferError) {
        enum Step {
            case done
            case write([UInt8], at: Int64)
            case wait(DispatchSemaphore)
        }
        let step = try deferred.withLock { state throws(TransferError) -> Step in
            switch state {
            case .none:
                return .done
            case .failed(let error):
                throw error
            case .kept(let bytes, let offset):
                state = .writing(waiters: [])
                return .write(bytes, at: offset)
            case .writing(var waiters):
                let semaphore = DispatchSemaphore(value: 0)
                waiters.append(semaphore)
                state = .writing(waiters: waiters)
                return .wait(semaphore)
            }
        }
        switch step {
        case .done:
            return
        case .wait(let semaphore):
            semaphore.wait()
            try writeDeferred()  // .none or .failed now
        case .write(let bytes, let offset):
            defer { Self.deferredTotal.subtract(bytes.count, ordering: .relaxed) }
            let written = bytes.withUnsafeBytes { bytes in Result { () throws(TransferError) in try write(bytes, at: offset) } }
            let waiters = deferred.withLock { state in
                guard case .writing(let waiters) = state else { preconditionFailure("one writer at a time") }
                switch written {
                case .success: state = .none
                case .failure(let error): state = .failed(error)
                }
                return waiters
            }
            for waiter in waiters { waiter.signal() }
            try written.get()
        }
    }

    public func truncate(to length: Int64) throws(TransferError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw Self.error(path: path, operation: "truncate", errno: errno)
        }
    }

    /// Makes every byte written so far durable under the file's name (before their length may be
    /// recorded): a file without one is named at `path` first, and then synced whole, its new
    /// link count with it.
    public func sync() throws(TransferError) {
        let namedNow = try name()
        try writeDeferred()
        guard (namedNow ? fsync(descriptor) : fdatasync(descriptor)) == 0 else {
            throw Self.error(path: path, operation: "sync", errno: errno)
        }
    }

    /// Makes the file's inode durable: a file linked into place carries its link count to disk
    /// (a directory's fsync does not write it on every file system: ext4 without a journal).
    func syncInode() throws(TransferError) {
        guard fsync(descriptor) == 0 else { throw Self.error(path: path, operation: "sync", errno: errno) }
    }

    /// Gives a file without a name its name, `path`, under its lock; true when it named it now.
    /// Whatever is at `path` — left there by an earlier download to the same destination — is
    /// replaced, unless another holder's lock is on it (`busy`). The lock is taken first: a file
    /// is linked only once (its inode is not linkable again after), so nothing may fail after it.
    @discardableResult
    func name() throws(TransferError) -> Bool {
        try naming.withLock { naming throws(TransferError) -> Bool in
            guard case .unnamed = naming else { return false }
            let lock = try FileLock.acquire(descriptor, openedAs, path: path)
            setPermissions(Self.ownerOnly)
            let link = { RawPath.withCString(self.path) { FileSystem.link(self.descriptor, to: (AT_FDCWD, $0)) } }
            var linked = link()
            if linked != 0, errno == EEXIST {
                try Self.removeUnlocked(path)
                linked = link()
            }
            guard linked == 0 else { throw Self.error(path: path, operation: "name", errno: errno) }
            naming = .named(lock)
            return true
        }
    }

    /// The file has no name yet.
    var isUnnamed: Bool {
        naming.withLock { naming in
            if case .unnamed = naming { true } else { false }
        }
    }

    /// The file was linked into place without a name before: `syncInode` (or a sync of its whole
    /// file system) makes that link durable.
    var isLinkedIntoPlace: Bool {
        naming.withLock { naming in
            if case .linkedIntoPlace = naming { true } else { false }
        }
    }

    /// Removes what is at `path`, unless a lock is on it (`busy`).
    private static func removeUnlocked(_ path: String) throws(TransferError) {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) }
        if fd >= 0 {
            defer { close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK { throw .busy(path: path) }
        }
        guard RawPath.withCString(path, { unlink($0) }) == 0 || errno == ENOENT else {
            throw error(path: path, operation: "remove", errno: errno)
        }
    }

    /// Makes every dirty page and inode of the file system the file is on durable, this file's
    /// included (`GroupSync` says when that is as good as `sync` and cheaper).
    func syncFileSystem() throws(TransferError) {
        guard FileSystem.syncFileSystem(descriptor) == 0 else {
            throw Self.error(path: path, operation: "sync the file system", errno: errno)
        }
    }

    /// The type of the file system the file is on (`f_type`), nil when it cannot be told.
    var fileSystemType: Int64? {
        FileSystem.fileSystemType(descriptor)
    }

    /// Starts writing the file's dirty pages back — all, or those of `range` — without waiting
    /// (`sync` still makes them durable).
    func startWriteback(_ range: Range<Int64>? = nil) {
        _ = FileSystem.startWriteback(descriptor, offset: range?.lowerBound ?? 0, length: range.map { $0.upperBound - $0.lowerBound } ?? 0)
    }

    /// The sha256 of the first `length` bytes, read in 1 MiB chunks.
    public func sha256(length: Int64) throws(TransferError) -> String {
        try writeDeferred()
        switch SHA256.hexDigest(ofDescriptor: descriptor, length: length) {
        case .success(let digest): return digest
        case .failure(let error): throw Self.error(path: path, operation: "read", errno: error.code)
        }
    }

    /// Moves the finished file to `destination` through `directory`, the directory both are in
    /// (`DirectoryHandle`). What is published is always the file open here — the one written
    /// and verified — never whatever is at `path` by then (another user who can write in the
    /// directory may have moved it away and put their own there): it is linked from its
    /// descriptor, its name at `path` removed after while it is still this file. Only a regular
    /// file is ever replaced, and it keeps its mode; a new file gets `mode`. The move is durable
    /// once the caller has synced `directory`, and a file linked while it had no name once its
    /// inode is (`isLinkedIntoPlace`; `FinishGroup` does both once for the files it finishes together).
    func moveIntoPlace(_ destination: String, in directory: DirectoryHandle, replacing: Bool, mode: mode_t = 0o644)
        throws(TransferError) {
        try writeDeferred()
        guard replacing else {
            try moveToNewPlace(destination, in: directory, mode: mode) {
                naming.withLock { naming in
                    guard directory.link(descriptor, to: destination) == 0 else { return errno }
                    if case .unnamed = naming { naming = .linkedIntoPlace }
                    return 0
                }
            }
            removeName(in: directory)
            return
        }
        // A link cannot replace anything, a rename can: the file is linked to a name no one
        // knows yet, which is renamed over the destination, which must then be this file. (A
        // finishing group names such a file before its sync, which then writes its link count too.)
        try name()
        if let existing = directory.existing(destination) {
            guard existing.isRegularFile else { throw TransferError.notRegularFile(path: destination) }
            setPermissions(existing.permissions)
        } else {
            setPermissions(mode)
        }
        let staged = path + ".\(String(UInt64.random(in: 1...UInt64.max), radix: 36))"
        guard directory.link(descriptor, to: staged) == 0 else { throw Self.error(path: staged, operation: "link", errno: errno) }
        guard directory.rename(staged, to: destination, replacing: true) == 0 else {
            let code = errno
            _ = directory.remove(staged, ifItIs: openedAs)
            throw Self.error(path: destination, operation: "rename into", errno: code)
        }
        guard directory.existing(destination)?.isFile(openedAs) == true else {
            throw .file(path: destination, operation: "put the download in place (another process replaced it at once: "
                + "the directory is writable by others)", errno: 0)
        }
        removeName(in: directory)
    }

    /// The file is in place: its name at `path` goes, if that is still this file.
    private func removeName(in directory: DirectoryHandle) {
        naming.withLock { naming in
            guard case .named = naming else { return }
            _ = directory.remove(path, ifItIs: openedAs)
        }
    }

    /// The move (`place`: a rename or a link, 0 or its errno) of a file that may not replace
    /// anything: nothing is looked up first (the destination is almost always new); what is
    /// there is looked at only when the move finds something, and the file gets its own mode back.
    private func moveToNewPlace(_ destination: String, in directory: DirectoryHandle, mode: mode_t,
                                _ place: () -> Int32) throws(TransferError) {
        let before = mode_t(permissions.load(ordering: .relaxed))
        setPermissions(mode)
        let code = place()
        guard code != 0 else { return }
        setPermissions(before)
        guard code == EEXIST else { throw Self.error(path: destination, operation: "move into", errno: code) }
        if let existing = directory.existing(destination), !existing.isRegularFile {
            throw TransferError.notRegularFile(path: destination)
        }
        throw TransferError.destinationExists(path: destination)
    }

    /// Gives the file `mode` unless it has it already.
    private func setPermissions(_ mode: mode_t) {
        guard permissions.exchange(UInt32(mode), ordering: .relaxed) != UInt32(mode) else { return }
        fchmod(descriptor, mode)
    }

    public static func remove(_ path: String) {
        RawPath.withCString(path) { _ = unlink($0) }
    }

    /// What is at a path, as one `lstat` (a symlink is not followed) tells it.
    public struct Existing: Equatable, Sendable {
        /// A regular file (not a directory, device, FIFO, socket or symlink).
        public var isRegularFile: Bool
        public var isDirectory: Bool
        public var size: Int64
        /// Its permission bits (`st_mode & 0o7777`).
        public var permissions: mode_t
        public var device: UInt64
        public var inode: UInt64

        init(_ info: stat) {
            isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
            isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            size = Int64(info.st_size)
            permissions = info.st_mode & 0o7777
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }

        /// The file open as `identity`, not another at its path.
        func isFile(_ identity: FileIdentity) -> Bool { device == identity.device && inode == identity.inode }
    }

    /// What is at `path`, nil when there is nothing.
    public static func existing(at path: String) -> Existing? {
        var info = stat()
        guard RawPath.withCString(path, { lstat($0, &info) }) == 0 else { return nil }
        return Existing(info)
    }

    public static func exists(_ path: String) -> Bool {
        existing(at: path) != nil
    }

    /// The directory `path` is in.
    static func directory(of path: String) -> String {
        split(path)?.directory ?? "."
    }

    /// The directory `path` is in and its name there, split at its last "/"; nil for a path
    /// with none.
    static func split(_ path: String) -> (directory: String, name: Substring)? {
        guard let slash = RawPath.lastSlash(in: path) else { return nil }
        return (slash == path.startIndex ? "/" : String(path[..<slash]), path[path.utf8.index(after: slash)...])
    }

    /// Creates the destination's missing parent directories with `mode` (exactly: the daemon's
    /// own umask does not narrow the client's).
    static func createDirectories(for path: String, mode: mode_t) throws(TransferError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/").dropLast() {
            prefix += "/" + component
            if RawPath.withCString(prefix, { mkdir($0, mode) }) == 0 {
                RawPath.withCString(prefix) { _ = chmod($0, mode) }
            } else if errno != EEXIST {
                throw error(path: prefix, operation: "create the directory", errno: errno)
            }
        }
    }

    static func error(path: String, operation: String, errno code: Int32) -> TransferError {
        .file(path: path, operation: operation, errno: code)
    }
}
