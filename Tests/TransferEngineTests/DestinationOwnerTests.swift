import Foundation
import Testing
@testable import TransferEngine

/// One owner per destination (spelled any way), and partial files trusted only as transferd left them.
@Suite struct DestinationOwnerTests {
    let directory = TemporaryDirectory()

    func download(_ path: String, paused: Bool = true) -> NewJob {
        NewJob(kind: .download, url: "http://127.0.0.1/x", path: path, paused: paused)
    }

    @Test func canonicalPathsResolveDotsAndSymlinkedDirectories() throws {
        let real = directory.file("real")
        try FileManager.default.createDirectory(atPath: real + "/sub", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.file("link"), withDestinationPath: real)
        let resolved = DestinationPath.canonical(real + "/x.bin")
        #expect(DestinationPath.canonical(directory.file("link") + "/x.bin") == resolved)
        #expect(DestinationPath.canonical(real + "/sub/../x.bin") == resolved)
        #expect(DestinationPath.canonical(real + "/./sub/./../x.bin") == resolved)
        // Below what exists, by spelling.
        #expect(DestinationPath.canonical(directory.file("link") + "/new/deeper/../x.bin")
                == DestinationPath.canonical(real + "/new/x.bin"))
        #expect(DestinationPath.canonical("/nonexistent-root-dir/../../b/./c") == "/b/c")
    }

    @Test func aBatchResolvesEachDirectoryOnceAndTheSameAsAlone() throws {
        let real = directory.file("real")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.file("link"), withDestinationPath: real)
        var directories: [String: String]? = [:]
        let first = DestinationPath.canonical(directory.file("link") + "/a.bin", directories: &directories)
        #expect(first == DestinationPath.canonical(real + "/a.bin"))
        #expect(directories?[directory.file("link")] == DestinationPath.canonical(real + "/a.bin").dropLast(6).description)
        // Remembered: the link's later target is not read again within the batch.
        try FileManager.default.removeItem(atPath: directory.file("link"))
        try FileManager.default.createSymbolicLink(atPath: directory.file("link"), withDestinationPath: directory.file("elsewhere"))
        #expect(DestinationPath.canonical(directory.file("link") + "/b.bin", directories: &directories)
                == DestinationPath.canonical(real + "/b.bin"))
        // A directory that does not exist yet is remembered as spelled below what exists.
        #expect(DestinationPath.canonical(directory.file("link") + "/../real/new/c.bin", directories: &directories)
                == DestinationPath.canonical(real + "/new/c.bin"))
        #expect(DestinationPath.canonical(real + "/new/./../d.bin", directories: &directories)
                == DestinationPath.canonical(real + "/d.bin"))
    }

    @Test func aSecondUnfinishedJobForTheSameFileIsRefusedNamingTheOwner() throws {
        let store = try JobStore(path: directory.database("t.db"))
        try FileManager.default.createDirectory(atPath: directory.file("d"), withIntermediateDirectories: true)
        let first = try store.insert(download(directory.file("d/x.bin")), maxRetries: 1, resume: nil)
        #expect(throws: DestinationRefusal.taken(path: directory.file("d/../d/x.bin"), owner: first.id)) {
            _ = try store.queue(download(directory.file("d/../d/x.bin")), defaultRetries: 1)
        }
        // Another file is fine; uploads own nothing.
        _ = try store.queue(download(directory.file("d/y.bin")), defaultRetries: 1)
    }

    @Test func anEndedJobReleasesItsDestinationAndARetryMustClaimItAgain() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let path = directory.file("x.bin")
        let first = try store.insert(download(path), maxRetries: 1, resume: nil)
        try store.setState(first.id, StateChange(.failed, reason: "gone"))
        let second = try store.queue(download(path), defaultRetries: 1)
        #expect(throws: DestinationRefusal.taken(path: path, owner: second.id)) {
            try store.claimDestination(of: first.id, path: path)
        }
        try store.setState(second.id, StateChange(.cancelled, reason: "by user"))
        try store.claimDestination(of: first.id, path: path)
        try store.claimDestination(of: first.id, path: path)  // claiming what it owns is fine
        #expect(throws: DestinationRefusal.taken(path: path, owner: first.id)) {
            _ = try store.queue(download(path), defaultRetries: 1)
        }
    }

    @Test func destinationsInsideTheStateDirectoryAreRefused() throws {
        let store = try JobStore(path: directory.database("t.db"))
        #expect(throws: DestinationRefusal.stateDirectory(path: directory.database("t.db"), directory: directory.path + "/state")) {
            _ = try store.queue(download(directory.database("t.db")), defaultRetries: 1)
        }
        #expect(throws: DestinationRefusal.self) {
            _ = try store.queue(download(directory.file("state/sub/../new/x")), defaultRetries: 1)
        }
        #expect(!DestinationPath.isInside("/a/bc", root: DestinationPath.root(of: "/a/b")))
        #expect(DestinationPath.isInside("/a/b/c", root: DestinationPath.root(of: "/a/b/")))
    }

    @Test func theDatabaseItselfRefusesTwoOwners() throws {
        let path = directory.database("t.db")
        let store = try JobStore(path: path)
        _ = try store.insert(download(directory.file("x.bin")), maxRetries: 1, resume: nil)
        let connection = try SQLiteConnection(path: path)
        #expect(throws: SQLiteError.self) {
            try connection.run("INSERT INTO jobs (kind, state, url, path, headers, overwrite, priority, max_retries, created_at, updated_at, destination) SELECT kind, state, url, path, headers, overwrite, priority, max_retries, created_at, updated_at, destination FROM jobs")
        }
    }

    // MARK: partial file identity

    func identity(size: Int64 = 100, modified: Int64 = 5, inode: UInt64 = 7) -> FileIdentity {
        FileIdentity(device: 1, inode: inode, size: size, modifiedNanoseconds: modified)
    }

    func state(durable: Int64 = 100, file: FileIdentity?, writing: Bool) -> ResumeState {
        ResumeState(partialPath: "/p", bytesDurable: durable, validators: Validators(etag: "\"e\""),
                    file: file, fileWriting: writing)
    }

    @Test func bytesAreContinuedOnlyInTheFileAsTransferdLeftIt() {
        let left = identity()
        #expect(state(file: left, writing: false).reasonToStartOver(current: left) == nil)
        #expect(state(file: left, writing: false).reasonToStartOver(current: identity(size: 150, modified: 9)) == .changed,
                "appended to while the job was not running")
        #expect(state(file: left, writing: false).reasonToStartOver(current: identity(modified: 6)) == .changed,
                "rewritten in place, same size")
        #expect(state(file: left, writing: false).reasonToStartOver(current: identity(inode: 8)) == .replaced)
        #expect(state(file: left, writing: false).reasonToStartOver(current: identity(size: 50)) == .shortened)
    }

    @Test func afterACrashMidWriteTheFileMayHaveGrownByTransferdsOwnHand() {
        let checkpoint = identity(size: 120, modified: 5)
        #expect(state(file: checkpoint, writing: true).reasonToStartOver(current: identity(size: 180, modified: 9)) == nil)
        #expect(state(file: checkpoint, writing: true).reasonToStartOver(current: identity(size: 90)) == .shortened)
        #expect(state(file: checkpoint, writing: true).reasonToStartOver(current: identity(size: 180, inode: 8)) == .replaced)
    }

    @Test func withoutARecordedIdentityOnlyTheLengthAndValidatorCount() {
        #expect(state(file: nil, writing: false).reasonToStartOver(current: identity(size: 100)) == nil)
        #expect(state(file: nil, writing: false).reasonToStartOver(current: identity(size: 99)) == .shortened)
        var unverifiable = state(file: nil, writing: false)
        unverifiable.validators = Validators()
        #expect(unverifiable.reasonToStartOver(current: identity()) == .noValidator)
        #expect(state(durable: 0, file: identity(inode: 3), writing: false).reasonToStartOver(current: identity()) == nil)
    }

    @Test func preparationStartsOverWhenThePartialFileChangedWhileStopped() throws {
        let store = try JobStore(path: directory.database("t.db"))
        let job = try store.insert(download(directory.file("x.bin")), maxRetries: 3, resume: nil)
        let partial = job.partialPath!
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: partial))
        let file = try PartialFile(path: partial)
        try store.saveResume(job.id, ResumeState(partialPath: partial, bytesDurable: 5000, validators: Validators(etag: "\"e\""))
            .identified(by: file, writing: false))
        // What `curl --continue-at 5000 -o PARTIAL` does: append.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 8, count: 10))
        try handle.close()
        guard case .ready(let reopened, let resume, .changed?) = try AttemptPreparation.prepare(job, attempt: 1, in: store) else {
            Issue.record("expected an attempt started over because the file changed"); return
        }
        #expect(resume.bytesDurable == 0)
        #expect(reopened.size == 0)
        #expect(try store.attempts(job.id).first?.startedOver == .changed)
        #expect(try store.resumeState(job.id)?.file == reopened.identity, "the new start is recorded")
    }

    @Test func theLockIsSharedWithinTheProcessAndReleasedWithItsLastHolder() throws {
        let path = directory.file(".x.transferd-part")
        var first: PartialFile? = try PartialFile(path: path)
        let second = try PartialFile(path: path)
        first = nil
        // Still locked by `second`: another open file description cannot take it.
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) != 0)
        _ = second
        _ = first
    }
}
