import Foundation
import Synchronization
import Testing
@testable import TransferEngine

@Suite struct PartialFileTests {
    let directory = TemporaryDirectory()

    @Test func partialPathIsAHiddenSibling() {
        #expect(PartialFile.partialPath(for: "/data/x/big.iso") == "/data/x/.big.iso.transferd-part")
        #expect(PartialFile.partialPath(for: "big.iso") == ".big.iso.transferd-part")
        #expect(PartialFile.partialPath(for: "/big.iso") == "/.big.iso.transferd-part")
    }

    /// A path splits at its last "/" byte, as the kernel splits it: also where a combining mark
    /// follows the slash (one `Character` with it), and in a name of raw bytes.
    @Test func pathsSplitAtTheirLastSlashByte() {
        #expect(PartialFile.directory(of: "/data/x/big.iso") == "/data/x")
        #expect(PartialFile.directory(of: "/big.iso") == "/")
        #expect(PartialFile.directory(of: "big.iso") == ".")
        #expect(PartialFile.directory(of: "/data/x/\u{301}é") == "/data/x")
        #expect(PartialFile.partialPath(for: "/data/x/\u{301}é") == "/data/x/.\u{301}é.transferd-part")
        let raw = RawPath.string(fromBytes: Array("/data/\u{FF}x/".utf8) + [0xFF, 0x2F, 0x61])
        #expect(PartialFile.directory(of: raw) == RawPath.string(fromBytes: Array("/data/\u{FF}x/".utf8) + [0xFF]))
    }

    @Test func writesTruncatesHashesAndMovesIntoPlace() throws {
        let destination = directory.file("sub/dir/out.txt")
        let file = try PartialFile(path: PartialFile.partialPath(for: destination))
        try Array("hello world".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try Array("HELLO".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try file.truncate(to: 5)
        try file.sync()
        #expect(try file.sha256(length: 5) == "3733cd977ff8eb18b987357e22ced99f46097f31ecb239e878ae63760e83e4d5")
        try move(file, to: destination, replacing: false)
        #expect(FileManager.default.contents(atPath: destination) == Data("HELLO".utf8))
    }

    @Test func bytesKeptForLaterAreWrittenBeforeASyncAHashOrTheRename() throws {
        for step in ["sync", "sha256", "rename", "release"] {
            let destination = directory.file("later-\(step)")
            var file: PartialFile? = try PartialFile(path: PartialFile.partialPath(for: destination))
            try Array("head ".utf8).withUnsafeBytes { try file!.write($0, at: 0) }
            #expect(file!.writeLater(Array("tail".utf8), at: 5))
            #expect(file!.size == 5, "\(step): kept, not written yet")
            switch step {
            case "sync": try file!.sync()
            case "sha256": #expect(try file!.sha256(length: 9) == "d260a42d48adc1549a339f9e9c1e4681a3f3e1faf6322406b11337abdb30b5db")
            case "rename": try move(file!, to: destination, replacing: false)
            default: file = nil
            }
            let path = step == "rename" ? destination : PartialFile.partialPath(for: destination)
            #expect(FileManager.default.contents(atPath: path) == Data("head tail".utf8), "\(step)")
            try file?.writeDeferred()  // nothing left: written once
            #expect(FileManager.default.contents(atPath: path) == Data("head tail".utf8), "\(step)")
        }
    }

    @Test func bytesKeptForLaterThatCannotBeWrittenFailEveryCallAfter() throws {
        let destination = directory.file("unwritable")
        let file = try PartialFile(path: PartialFile.partialPath(for: destination))
        #expect(file.writeLater(Array("tail".utf8), at: -1), "an offset pwrite refuses")
        #expect(throws: TransferError.self, "the write fails") { try file.writeDeferred() }
        #expect(throws: TransferError.self, "and so does the next call: the bytes are not there") { try file.writeDeferred() }
        #expect(throws: TransferError.self, "nor is the file synced as if they were") { try file.sync() }
        #expect(throws: TransferError.self, "nor moved into place") { try move(file, to: destination, replacing: false) }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    /// Threads that ask for the kept bytes while another writes them return only once they are
    /// in the file, or all fail with the write's error.
    @Test func callsWhileTheKeptBytesAreBeingWrittenWaitForThem() throws {
        // A few bytes only: the limit test beside this one leaves 1 KiB of room.
        let tail = [UInt8](repeating: 9, count: 512)
        for round in 0..<100 {
            let file = try PartialFile(path: directory.file(".race-\(round).transferd-part"))
            let failing = round % 2 == 1
            #expect(file.writeLater(tail, at: failing ? -1 : 0))
            let sizes = Mutex<[Int64?]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let size: Int64? = (try? file.writeDeferred()) == nil ? nil : file.size
                sizes.withLock { $0.append(size) }
            }
            let expected: Int64? = failing ? nil : Int64(tail.count)
            #expect(sizes.withLock { $0 } == [expected, expected, expected, expected], "round \(round)")
        }
    }

    @Test func bytesKeptForLaterAreBoundedInAllFilesTogether() throws {
        let first = try PartialFile(path: directory.file(".a.transferd-part"))
        let second = try PartialFile(path: directory.file(".b.transferd-part"))
        // 1 KiB short of the limit: the other tests keep a few bytes at most meanwhile.
        let most = [UInt8](repeating: 7, count: PartialFile.deferredLimit - 1024)
        let more = [UInt8](repeating: 1, count: 2048)
        #expect(first.writeLater(most, at: 0))
        #expect(!second.writeLater(more, at: 0), "past the limit the caller writes itself")
        try first.writeDeferred()
        #expect(first.size == Int64(most.count))
        #expect(second.writeLater(more, at: 0), "room again once written")
        try second.writeDeferred()
    }

    @Test func refusesToReplaceWithoutOverwrite() throws {
        let destination = directory.file("exists.txt")
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        let file = try PartialFile(path: PartialFile.partialPath(for: destination))
        #expect(throws: TransferError.destinationExists(path: destination)) {
            try move(file, to: destination, replacing: false)
        }
        #expect(try mode(of: file.path) == 0o600, "a partial file stays owner-only when its rename is refused")
        #expect(FileManager.default.contents(atPath: destination) == Data("old".utf8))
        try move(file, to: destination, replacing: true)
        #expect(FileManager.default.contents(atPath: destination) == Data())
    }

    @Test func neverRenamesOntoADirectory() throws {
        let destination = directory.file("a-directory")
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
        for replacing in [false, true] {
            let file = try PartialFile(path: PartialFile.partialPath(for: destination))
            #expect(throws: TransferError.notRegularFile(path: destination)) {
                try move(file, to: destination, replacing: replacing)
            }
            #expect(PartialFile.existing(at: destination)?.isDirectory == true)
        }
    }

    @Test func aNewFileGetsItsModeAtTheRename() throws {
        let destination = directory.file("new-mode")
        let file = try PartialFile(path: PartialFile.partialPath(for: destination))
        #expect(try mode(of: file.path) == 0o600)
        try move(file, to: destination, replacing: false, mode: 0o640)
        #expect(try mode(of: destination) == 0o640)
    }

    @Test func theRenameLandsInTheDirectoryOpenedForItsSync() throws {
        let parent = directory.file("opened")
        let destination = parent + "/file"
        let file = try PartialFile(path: PartialFile.partialPath(for: destination))
        let opened = try DirectoryHandle(parent)
        // The directory's path comes to name another directory before the rename.
        #expect(rename(parent, parent + "-moved") == 0)
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false)
        try file.moveIntoPlace(destination, in: opened, replacing: false)
        #expect(FileManager.default.fileExists(atPath: parent + "-moved/file"), "renamed inside the directory opened, which sync makes durable")
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    /// A download's first file has no name: nothing of it is in its directory (made for it when
    /// missing) until it is linked into place, synced meanwhile without one.
    @Test func aFileWithoutANameAppearsOnlyInPlace() throws {
        let parent = directory.file("unnamed")
        let destination = parent + "/out.txt"
        let file = try PartialFile.unnamed(path: PartialFile.partialPath(for: destination), directoryMode: 0o750)
        try Array("hello".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        #expect(file.isUnnamed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == [])
        #expect(try mode(of: parent) == 0o750)
        try file.syncFileSystem()  // as its finishing group syncs it
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == [], "synced without a name")
        try move(file, to: destination, replacing: false, mode: 0o640)
        #expect(file.isLinkedIntoPlace)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == ["out.txt"])
        #expect(FileManager.default.contents(atPath: destination) == Data("hello".utf8))
        #expect(try mode(of: destination) == 0o640)
    }

    /// A checkpoint's or a stop's sync names the file at its partial path, replacing what an
    /// earlier download left there, and takes its lock; it is then renamed into place.
    @Test func aSyncNamesAFileWithoutANameAndTakesItsLock() throws {
        let destination = directory.file("named-later")
        let partial = PartialFile.partialPath(for: destination)
        try Data("left over".utf8).write(to: URL(fileURLWithPath: partial))
        let file = try PartialFile.unnamed(path: partial)
        try Array("new".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        #expect(!file.isUnnamed)
        #expect(FileManager.default.contents(atPath: partial) == Data("new".utf8))
        #expect(try mode(of: partial) == 0o600)
        let other = open(partial, O_RDONLY | O_CLOEXEC)
        defer { close(other) }
        #expect(flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK, "its lock is held")
        try move(file, to: destination, replacing: false)
        #expect(!file.isLinkedIntoPlace)
        #expect(!FileManager.default.fileExists(atPath: partial), "renamed from its name")
        #expect(FileManager.default.contents(atPath: destination) == Data("new".utf8))
    }

    @Test func aFileWithoutANameIsNamedOverASymlinkWithoutFollowingIt() throws {
        let target = directory.file("victim-of-naming")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
        let partial = directory.file(".linked.transferd-part")
        try FileManager.default.createSymbolicLink(atPath: partial, withDestinationPath: target)
        let file = try PartialFile.unnamed(path: partial)
        try Array("mine".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try file.sync()
        #expect(PartialFile.existing(at: partial)?.isRegularFile == true, "the link replaced by the file")
        #expect(FileManager.default.contents(atPath: partial) == Data("mine".utf8))
        #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8))
    }

    /// Made with its destination's mode (nobody can open it by a path), owner-only once named.
    @Test func aFileWithoutANameHasItsDestinationsModeUntilItIsNamed() throws {
        for named in [false, true] {
            let destination = directory.file("moded-\(named)")
            let file = try PartialFile.unnamed(path: PartialFile.partialPath(for: destination), mode: 0o640)
            if named {
                try file.sync()
                #expect(try mode(of: file.path) == 0o600)
            }
            try move(file, to: destination, replacing: false, mode: 0o640)
            #expect(try mode(of: destination) == 0o640, "named: \(named)")
        }
    }

    @Test func aFileWithoutANameIsNotNamedOverALockedOne() throws {
        let partial = directory.file(".locked.transferd-part")
        let holder = try PartialFile(path: partial)
        try Array("theirs".utf8).withUnsafeBytes { try holder.write($0, at: 0) }
        let file = try PartialFile.unnamed(path: partial)
        #expect(throws: TransferError.busy(path: partial)) { try file.sync() }
        #expect(file.isUnnamed)
        #expect(FileManager.default.contents(atPath: partial) == Data("theirs".utf8))
    }

    /// A link never replaces a destination; an overwrite names the file and renames it over.
    @Test func aFileWithoutANameReplacesADestinationOnlyByARename() throws {
        let destination = directory.file("taken.txt")
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        let file = try PartialFile.unnamed(path: PartialFile.partialPath(for: destination))
        try Array("new".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        #expect(throws: TransferError.destinationExists(path: destination)) {
            try move(file, to: destination, replacing: false)
        }
        #expect(file.isUnnamed)
        #expect(FileManager.default.contents(atPath: destination) == Data("old".utf8))
        try move(file, to: destination, replacing: true)
        #expect(FileManager.default.contents(atPath: destination) == Data("new".utf8))
        #expect(!FileManager.default.fileExists(atPath: PartialFile.partialPath(for: destination)))
    }

    /// Moves `file` into place through its destination's directory, as a finishing group does.
    private func move(_ file: PartialFile, to destination: String, replacing: Bool, mode: mode_t = 0o644) throws {
        try file.moveIntoPlace(destination, in: DirectoryHandle(PartialFile.directory(of: destination)), replacing: replacing, mode: mode)
    }

    private func mode(of path: String) throws -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TransferError.io(path: path, operation: "stat", errno: errno) }
        return info.st_mode & 0o7777
    }

    @Test func doesNotFollowASymlinkAtThePartialPath() throws {
        let target = directory.file("victim")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
        let partial = directory.file(".out.transferd-part")
        try FileManager.default.createSymbolicLink(atPath: partial, withDestinationPath: target)
        #expect(throws: TransferError.self) { _ = try PartialFile(path: partial) }
        #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8))
    }

    @Test func missingDirectoriesAreMadeWithTheModeAndExistingOnesLeftAsTheyAre() throws {
        let existing = directory.file("kept")
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        _ = try PartialFile(path: existing + "/new/deeper/.x.transferd-part", directoryMode: 0o751)
        let mode = { (path: String) in (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) }
        #expect(try mode(existing) == 0o700)
        #expect(try mode(existing + "/new") == 0o751 && mode(existing + "/new/deeper") == 0o751)
        _ = try PartialFile(path: existing + "/new/deeper/.y.transferd-part", directoryMode: 0o755)
        #expect(try mode(existing + "/new/deeper") == 0o751, "a directory that exists is not made again")
    }

    @Test func aFileInPlaceOfADirectoryIsAnIOError() throws {
        let blocker = directory.file("blocker")
        try Data().write(to: URL(fileURLWithPath: blocker))
        #expect {
            _ = try PartialFile(path: blocker + "/.x.transferd-part")
        } throws: { error in
            (error as? TransferError)?.code == "io"
        }
    }
}

@Suite struct ResumeDataTests {
    @Test func documentRoundTripsWithEveryKey() throws {
        let job = Job(Job.Fields(id: JobID(rawValue: 3), kind: .download, state: .paused, url: "http://h/f", path: "/d/f",
                      headers: ["X: 1"], overwrite: false, priority: .normal, maxRetries: 7, bytesDone: 10,
                      attempts: 1, createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
        let state = ResumeState(partialPath: "/d/.f.transferd-part", bytesDurable: 10,
                                validators: Validators(etag: nil, lastModified: "Sun"), bytesTotal: nil)
        let document = ResumeData(job: job, state: state)
        let data = try JSONEncoder().encode(document)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["version", "url", "path", "partialPath", "bytesReceived", "etag", "lastModified",
                                     "bytesTotal", "headers"])
        #expect(object["etag"] is NSNull)
        #expect(try JSONDecoder().decode(ResumeData.self, from: data) == document)
    }

    @Test func exportsNoSecretHeaders() {
        let job = Job(Job.Fields(id: JobID(rawValue: 1), kind: .download, state: .paused, url: "http://h/f", path: "/d/f",
                      headers: ["Authorization: Bearer s3cret", "X-Keep: 1", "Cookie: c=1"], overwrite: false,
                      priority: .normal, maxRetries: 7, bytesDone: 0, attempts: 1,
                      createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
        let document = ResumeData(job: job, state: ResumeState(partialPath: "/d/.f.transferd-part"))
        #expect(document.headers == ["X-Keep: 1"])
    }

    @Test func decodingErrorsReadAsOneLine() {
        struct Shape: Decodable { var url: String; var bytesReceived: Int }
        let missing = #"{"url": "x"}"#
        do {
            _ = try JSONDecoder().decode(Shape.self, from: Data(missing.utf8))
            Issue.record("decoding should fail")
        } catch {
            #expect(DecodingSummary.describe(error) == "missing field 'bytesReceived'")
        }
        do {
            _ = try JSONDecoder().decode(Shape.self, from: Data(#"{"url": 3, "bytesReceived": 1}"#.utf8))
        } catch {
            #expect(DecodingSummary.describe(error) == "wrong type at 'url'")
        }
    }

    @Test func jobJSONHasTheSpecKeysAndNulls() throws {
        let job = Job(Job.Fields(id: JobID(rawValue: 3), kind: .download, state: .queued, url: "http://h/f", path: "/d/f",
                      headers: ["Cookie: secret=1"], overwrite: false, priority: .high, maxRetries: 7, bytesDone: 0,
                      attempts: 0, createdAt: Timestamp(rawValue: 1_800_000_000_000),
                      updatedAt: Timestamp(rawValue: 1_800_000_000_000)))
        let data = try JSONEncoder().encode(job)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in ["id", "kind", "state", "url", "path", "bytesDone", "bytesTotal", "attempts", "httpStatus", "error",
                    "priority", "batch", "limit", "createdAt", "updatedAt", "finishedAt"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["bytesTotal"] is NSNull)
        #expect(object["createdAt"] as? String == "2027-01-15T08:00:00.000Z")
        #expect(!String(decoding: data, as: UTF8.self).contains("secret"))
        #expect(try JSONDecoder().decode(Job.self, from: data).id == job.id)
    }
}
