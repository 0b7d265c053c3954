import Glibc
import Testing
@testable import TransferEngine

/// Which state directories and files the daemon trusts: its own, writable by nobody else.
@Suite struct StateTrustDecisionTests {
    let me: UInt32 = 1000
    let directory = UInt32(S_IFDIR), file = UInt32(S_IFREG), link = UInt32(S_IFLNK)

    @Test func ownPrivateDirectoryAndFilesAreTrusted() {
        #expect(StateTrust.problem(path: "/s", isDirectory: true, type: directory, owner: me, mode: 0o700, uid: me) == nil)
        #expect(StateTrust.problem(path: "/s", isDirectory: true, type: directory, owner: me, mode: 0o755, uid: me) == nil,
                "readable by others is not writable by them")
        #expect(StateTrust.problem(path: "/s/t.db", isDirectory: false, type: file, owner: me, mode: 0o644, uid: me) == nil,
                "a readable file is trusted (and made owner-only by `check`)")
    }

    @Test func anotherOwnerOrWritableByOthersIsRefused() {
        #expect(StateTrust.problem(path: "/s", isDirectory: true, type: directory, owner: 65534, mode: 0o700, uid: me)
                == .foreignOwner(path: "/s", owner: 65534, expected: me))
        #expect(StateTrust.problem(path: "/s", isDirectory: true, type: directory, owner: me, mode: 0o777, uid: me)
                == .writableByOthers(path: "/s", mode: 0o777))
        #expect(StateTrust.problem(path: "/s", isDirectory: true, type: directory, owner: me, mode: 0o770, uid: me)
                == .writableByOthers(path: "/s", mode: 0o770), "group-writable too")
        #expect(StateTrust.problem(path: "/s/t.db", isDirectory: false, type: file, owner: 0, mode: 0o600, uid: me)
                == .foreignOwner(path: "/s/t.db", owner: 0, expected: me), "even root's file is not this user's")
    }

    @Test func aSymlinkOrADirectoryWhereAFileBelongsIsRefused() {
        #expect(StateTrust.problem(path: "/s/t.db", isDirectory: false, type: link, owner: me, mode: 0o777, uid: me)
                == .notARegularFile(path: "/s/t.db"))
        #expect(StateTrust.problem(path: "/s", isDirectory: true, type: file, owner: me, mode: 0o600, uid: me)
                == .notADirectory(path: "/s"))
        #expect(StateTrust.Problem.writableByOthers(path: "/s", mode: 0o40777).message.contains("mode 777"))
    }
}
