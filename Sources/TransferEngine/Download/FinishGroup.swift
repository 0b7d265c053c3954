import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Finishing downloads, many at once: the file-system analogue of the store's group commit.
/// Files that finish while a group is being made durable form the next group, which is made
/// durable together: one syncfs for the file system many of them share (it writes their pages
/// back itself), or each file's writeback started and then each fdatasynced side by side on
/// threads of its own (`GroupSync` chooses), their directories opened, the `finalizing` marks
/// recorded in one transaction, the renames (or links, for files that never had a name), one
/// fsync per directory (or one more syncfs, which also writes the linked files' inodes), the
/// jobs' completions recorded in one transaction (while the next group begins), and only then is
/// each answered. Each file keeps the order of durability of one finished alone: bytes synced,
/// marked finalizing, moved into place, directory entry synced — before its job is recorded
/// completed.
/// Thread: any; groups run one at a time on their own queue.
final class FinishGroup: Sendable {
    struct Finish: Sendable {
        var job: JobID
        var file: PartialFile
        /// The complete file's resume state (recorded `finalizing` before the rename).
        var state: ResumeState
        var destination: String
        var replacing: Bool
        var mode: mode_t
        /// The job's record once its file is in place (nil: the scheduler records it).
        var completion: StateRecord?
        /// The completion as recorded, when the file is in place.
        var done: @Sendable (Result<RecordedCompletion?, TransferError>) -> Void
    }

    private let store: StoreQueue
    /// Its own threads: a long sha256 on the scheduler's file threads must not hold a sync up.
    private let threads = SyncPool()
    private let queue = DispatchQueue(label: "transferd.finish")
    private let pending = Mutex<[Finish]>([])
    /// Files handed over whose kept bytes are not written yet. A writer of their own writes
    /// them, `writeAhead` at a time, while the group before them is being made durable: their
    /// group then finds them written (or waits for the write under way, or fails with its
    /// error), and writes those still short of a round itself.
    private let unwritten = Mutex<[PartialFile]>([])
    private let writer = DispatchQueue(label: "transferd.finish.writer")
    /// Files that wake the writer: one at a time, a batch of small files woke it for each.
    static let writeAhead = 4

    init(store: StoreQueue) {
        self.store = store
    }

    /// Makes `finish` durable and renamed with the next group; its `done` runs once its
    /// directory entry is synced and its completion recorded (or with why not), on the group's
    /// queue or the store's.
    func finish(_ finish: Finish) {
        // Into `unwritten` before `pending`: a group that drains it lets go of it then. The
        // other way round, a group could begin (and let go of `unwritten`) in between, and the
        // file stayed there, open, until the next download finished.
        let enough = unwritten.withLock { files in
            files.append(finish.file)
            return files.count == Self.writeAhead
        }
        if enough { writer.async { [self] in writeUnwritten() } }
        let first = pending.withLock { group in
            group.append(finish)
            return group.count == 1
        }
        if first { queue.async { [self] in drain() } }
    }

    /// Writes the kept bytes of the files handed over, until none is left; a failure stays
    /// with its file and fails that file's finish.
    private func writeUnwritten() {
        while true {
            let files = unwritten.withLock { files in
                defer { files.removeAll(keepingCapacity: true) }
                return files
            }
            guard !files.isEmpty else { return }
            for file in files { try? file.writeDeferred() }
        }
    }

    private func drain() {
        let group = pending.withLock { group in
            defer { group.removeAll(keepingCapacity: true) }
            return group
        }
        // Those the writer was not woken for yet are this group's to write (below): let go of them.
        unwritten.withLock { $0.removeAll(keepingCapacity: true) }
        // A complete body's last bytes, kept from the loop thread, are in the file first: the
        // writer has written most of them by now; this writes the rest, waits for a write
        // under way, or fails a file with its write's error.
        // The group's values are read in place (`group[index].field`): a `Finish` copied out is
        // a dozen references retained and released.
        var results = group.indices.map { index in Result { () throws(TransferError) in try group[index].file.writeDeferred() } }
        syncAll(group, &results)
        let directories = openDirectories(group, &results)
        markFinalizing(group, &results)
        var renamedInto = Set<String>()
        for index in group.indices where results[index].isSuccess {
            let path = PartialFile.directory(of: group[index].destination)
            guard let directory = directories[path] else { continue }  // its open failed the file
            results[index] = Result { () throws(TransferError) in
                try group[index].file.moveIntoPlace(group[index].destination, in: directory, replacing: group[index].replacing,
                                                    mode: group[index].mode)
            }
            if results[index].isSuccess { renamedInto.insert(path) }
        }
        let syncedAgain = syncLinks(group, &results)
        for directory in directories.values where renamedInto.contains(directory.path) && !syncedAgain.contains(directory.device) {
            do throws(TransferError) {
                try directory.sync()
            } catch {
                // Renamed, but the entry may not survive a crash: not completed.
                for index in group.indices where PartialFile.directory(of: group[index].destination) == directory.path {
                    results[index] = .failure(error)
                }
            }
        }
        recordCompletions(group, results)
    }

    /// Records the completion of every job whose file is now in place, in one transaction, at
    /// one time: no job is recorded completed before its file and directory entry are durable.
    /// Those it cannot record are answered with why (a crash before then finds the files in
    /// place by their `finalizing` marks). The group does not wait for the commit: the next
    /// group syncs its files while the store commits this one's records (each group spent a
    /// tenth to a fifth of its time waiting for it), and each job is answered once it is done.
    private func recordCompletions(_ group: [Finish], _ results: [Result<Void, TransferError>]) {
        let now = Timestamp.now
        let recorded = group.indices.map { index -> RecordedCompletion? in
            guard results[index].isSuccess, var record = group[index].completion else { return nil }
            record.at = now
            return RecordedCompletion(record: record)
        }
        let records = recorded.compactMap { $0?.record }
        guard !records.isEmpty else { return Self.answer(group, results, recorded) }
        store.async({ store in
            for record in records { try record.write(to: store) }
        }) { outcome in
            var recorded = recorded
            if case .failure(let error) = outcome {
                for index in recorded.indices { recorded[index]?.error = "\(error)" }
            }
            Self.answer(group, results, recorded)
        }
    }

    /// Tells each job of the group how its finish ended: failed, or in place and recorded (or
    /// in place and not recorded, with why).
    private static func answer(_ group: [Finish], _ results: [Result<Void, TransferError>], _ recorded: [RecordedCompletion?]) {
        for index in group.indices { group[index].done(results[index].map { recorded[index] }) }
    }

    /// Opens the directory of every file still on its way, once each, by path; a file whose
    /// directory cannot be opened (no descriptor to spare) fails before it is marked or renamed.
    /// The renames go through these descriptors, into the directories that are then synced.
    private func openDirectories(_ group: [Finish], _ results: inout [Result<Void, TransferError>]) -> [String: DirectoryHandle] {
        var opened: [String: Result<DirectoryHandle, TransferError>] = [:]
        for index in group.indices where results[index].isSuccess {
            let path = PartialFile.directory(of: group[index].destination)
            let directory = opened[path] ?? Result { () throws(TransferError) in try DirectoryHandle(path) }
            opened[path] = directory
            if case .failure(let error) = directory { results[index] = .failure(error) }
        }
        return opened.compactMapValues { try? $0.get() }
    }

    /// Makes every file of the group still on its way durable and waits for them all: one
    /// syncfs for each file system `GroupSync` chooses (it writes every dirty page back itself),
    /// and each other file synced under its name, side by side, after writeback has started for
    /// all of them (a file without a name gets it first: `PartialFile.sync`). Only the files of a
    /// file system synced whole are left without a name, to be linked into place.
    private func syncAll(_ group: [Finish], _ outcomes: inout [Result<Void, TransferError>]) {
        // A file that may replace its destination is renamed over it (a link cannot replace
        // anything): one without a name is named first, so that the sync carries its new link
        // count to disk with its bytes.
        for index in group.indices where outcomes[index].isSuccess && group[index].replacing {
            outcomes[index] = Result { () throws(TransferError) in _ = try group[index].file.name() }
        }
        var synced = Set<UInt64>()
        let byDevice = Dictionary(grouping: group.indices.filter { outcomes[$0].isSuccess }, by: { group[$0].file.device })
        // /proc/meminfo is read only when some file system has files enough for a syncfs.
        let dirtyBytes = byDevice.values.contains { $0.count >= GroupSync.minimumFiles } ? SystemMemory.dirtyBytes() : nil
        for (device, files) in byDevice {
            let file = group[files[0]].file
            guard GroupSync.syncsWholeFileSystem(type: file.fileSystemType, files: files.count, dirtyBytes: dirtyBytes) else {
                continue
            }
            // A writeback error anywhere on the file system fails it: then each file's own
            // fdatasync tells which of them it was.
            if (try? file.syncFileSystem()) != nil { synced.insert(device) }
        }
        let results = Mutex(outcomes)
        let unsynced = byDevice.filter { !synced.contains($0.key) }.values.joined().sorted()
        for index in unsynced { group[index].file.startWriteback() }
        let done = DispatchGroup()
        for index in unsynced {
            let file = group[index].file
            done.enter()
            threads.async {
                let result = Result { () throws(TransferError) in try file.sync() }
                results.withLock { $0[index] = result }
                done.leave()
            }
        }
        done.wait()
        outcomes = results.withLock { $0 }
    }

    /// Makes the links of the files linked into place durable: each file system they are on (all
    /// of them ones the group synced whole: `syncAll`) is synced whole again, which writes their
    /// inodes — the new link counts, which a directory's fsync does not write everywhere (ext4
    /// without a journal) — and the directories they are in, which then need no fsync of their
    /// own. Where that fails, each such file is fsynced (its error tells which). Returns the file
    /// systems synced again.
    private func syncLinks(_ group: [Finish], _ results: inout [Result<Void, TransferError>]) -> Set<UInt64> {
        let linked = group.indices.filter { results[$0].isSuccess && group[$0].file.isLinkedIntoPlace }
        var synced = Set<UInt64>()
        var failed = Set<UInt64>()
        for index in linked {
            let file = group[index].file
            guard !synced.contains(file.device), !failed.contains(file.device) else { continue }
            if (try? file.syncFileSystem()) != nil {
                synced.insert(file.device)
            } else {
                failed.insert(file.device)
            }
        }
        for index in linked where failed.contains(group[index].file.device) {
            results[index] = Result { () throws(TransferError) in try group[index].file.syncInode() }
        }
        return synced
    }

    /// Records every synced file of the group as `finalizing`, in one transaction: a crash after
    /// a rename then finds the file in place instead of downloading it again.
    private func markFinalizing(_ group: [Finish], _ results: inout [Result<Void, TransferError>]) {
        let marks = group.indices.compactMap { index -> (JobID, ResumeState)? in
            guard results[index].isSuccess else { return nil }
            // As the file is now (its last bytes may have been written by this group).
            var marked = group[index].state.identified(by: group[index].file, writing: false)
            marked.finalizing = true
            return (group[index].job, marked)
        }
        guard !marks.isEmpty else { return }
        do {
            try store.sync { store in
                for (job, state) in marks { try store.saveResume(job, state, updatingProgress: false) }
            }
        } catch {
            for index in results.indices where results[index].isSuccess {
                results[index] = .failure(.io(path: group[index].state.partialPath, operation: "record finalizing: \(error)",
                                              errno: 0))
            }
        }
    }
}

private extension Result {
    var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
