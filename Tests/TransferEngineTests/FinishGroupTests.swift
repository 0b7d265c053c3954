import Foundation
import Testing
@testable import TransferEngine

/// Downloads that finish together are made durable and renamed as one group.
@Suite struct FinishGroupTests {
    let directory = TemporaryDirectory()

    /// Files with a name (renamed into place) and files without one (a download's first
    /// attempt: linked into place when their file system is synced whole, else named and renamed).
    @Test(arguments: [false, true])
    func eachFileIsMarkedFinalizingMovedRecordedAndAnsweredAndARefusedOneFailsAlone(unnamed: Bool) async throws {
        let jobs = try JobStore(path: directory.database("f.db"))
        let store = StoreQueue(jobs)
        try FileManager.default.createDirectory(atPath: directory.file("a"), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: directory.file("a/taken")))
        let names = ["a/one", "a/two", "b/three", "a/taken"]
        let ids = try Dictionary(uniqueKeysWithValues: names.map { name in
            (name, try jobs.insert(NewJob(kind: .download, url: "http://127.0.0.1/\(name)", path: directory.file(name)),
                                   maxRetries: 1, resume: nil).id)
        })
        let group = FinishGroup(store: store)
        let before = Timestamp.now
        let results = try await withThrowingTaskGroup(of: (String, Result<RecordedCompletion?, TransferError>).self) { tasks in
            for name in names {
                let destination = directory.file(name)
                let partial = PartialFile.partialPath(for: destination)
                let file = unnamed ? try PartialFile.unnamed(path: partial) : try PartialFile(path: partial)
                // The last bytes kept for the group to write (as a complete small body's are).
                try Array(name.utf8.prefix(2)).withUnsafeBytes { try file.write($0, at: 0) }
                #expect(file.writeLater(Array(name.utf8.dropFirst(2)), at: 2))
                let state = ResumeState(partialPath: file.path, bytesDurable: Int64(name.utf8.count))
                let id = ids[name]!
                var completion = StateRecord(token: 1, id: id, change: StateChange(.completed, bytesDone: state.bytesDurable), at: before)
                completion.resume = .delete
                tasks.addTask {
                    await withCheckedContinuation { done in
                        group.finish(FinishGroup.Finish(job: id, file: file, state: state, destination: destination,
                                                        replacing: false, mode: 0o640, completion: completion) {
                            done.resume(returning: (name, $0))
                        })
                    }
                }
            }
            return try await tasks.reduce(into: [String: Result<RecordedCompletion?, TransferError>]()) { $0[$1.0] = $1.1 }
        }
        for name in ["a/one", "a/two", "b/three"] {
            let recorded = try #require(try? results[name]?.get(), "\(name) is recorded with its group")
            #expect(recorded.error == nil && recorded.record.at >= before, "\(name): recorded when it was written")
            let job = try store.sync { try $0.job(ids[name]!) }
            #expect(job?.state == .completed && job?.finishedAt == recorded.record.at, "\(name): completed at that time")
            #expect(FileManager.default.contents(atPath: directory.file(name)) == Data(name.utf8))
            #expect(try mode(of: directory.file(name)) == 0o640)
            #expect(!FileManager.default.fileExists(atPath: PartialFile.partialPath(for: directory.file(name))), "\(name): moved, not copied")
            let marked = try store.sync { try $0.resumeState(ids[name]!) }
            #expect(marked == nil, "\(name): its mark, kept until its completion was recorded, went with it")
        }
        guard case .failure(.destinationExists(let path))? = results["a/taken"] else {
            Issue.record("a taken destination is refused, not replaced: \(String(describing: results["a/taken"]))")
            return
        }
        #expect(path == directory.file("a/taken"))
        let refused = try store.sync { try $0.job(ids["a/taken"]!) }
        #expect(refused?.state == .queued, "a file not in place is not recorded completed")
        let marked = try store.sync { try $0.resumeState(ids["a/taken"]!) }
        #expect(marked?.finalizing == true, "marked finalizing before its rename was refused")
        #expect(marked?.file?.size == Int64("a/taken".utf8.count), "marked as written whole")
        #expect(FileManager.default.contents(atPath: directory.file("a/taken")) == Data("old".utf8))
    }

    private func mode(of path: String) throws -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TransferError.io(path: path, operation: "stat", errno: errno) }
        return info.st_mode & 0o7777
    }
}

/// When a finishing group syncs a whole file system instead of each file.
@Suite struct GroupSyncTests {
    let ext4: Int64 = 0xEF53

    @Test func manyFilesOnATrustedFileSystemWithLittleDirtySyncItWhole() {
        #expect(GroupSync.syncsWholeFileSystem(type: ext4, files: 16, dirtyBytes: 1 << 20))
        #expect(GroupSync.syncsWholeFileSystem(type: 0x5846_5342, files: GroupSync.minimumFiles, dirtyBytes: GroupSync.dirtyLimit))
    }

    @Test func fewFilesMuchDirtyAnUntrustedOrUnknownFileSystemSyncEachFile() {
        #expect(!GroupSync.syncsWholeFileSystem(type: ext4, files: GroupSync.minimumFiles - 1, dirtyBytes: 0))
        #expect(!GroupSync.syncsWholeFileSystem(type: ext4, files: 16, dirtyBytes: GroupSync.dirtyLimit + 1))
        #expect(!GroupSync.syncsWholeFileSystem(type: ext4, files: 16, dirtyBytes: nil))
        #expect(!GroupSync.syncsWholeFileSystem(type: 0x6573_5546, files: 16, dirtyBytes: 0), "FUSE")
        #expect(!GroupSync.syncsWholeFileSystem(type: nil, files: 16, dirtyBytes: 0))
    }

    @Test func dirtyBytesAreDirtyPlusWritebackFromMeminfo() {
        let text = "MemTotal:       24576000 kB\nDirty:              1234 kB\nWriteback:            16 kB\nWritebackTmp:          0 kB\n"
        let bytes: Int64? = SystemMemory.dirtyBytes(meminfo: ArraySlice(text.utf8))
        #expect(bytes == 1_280_000)
        #expect(SystemMemory.dirtyBytes(meminfo: ArraySlice("Dirty: 5 kB\n".utf8)) == nil, "both lines or nothing")
        #expect(SystemMemory.dirtyBytes(meminfo: ArraySlice("Dirty: kB\nWriteback: 16 kB\n".utf8)) == nil, "a value without digits")
        let unterminated: Int64? = SystemMemory.dirtyBytes(meminfo: ArraySlice("Dirty: 5 kB\nWriteback: 16 kB".utf8))
        #expect(unterminated == 21_504, "no newline at the end")
        #expect(SystemMemory.dirtyBytes() != nil, "this system's /proc/meminfo")
    }
}
