import Testing
@testable import TransferEngine

@Suite struct WebDAVLayoutTests {
    let prefix = "http://127.0.0.1:8080/backup"

    @Test func encodesEverySegmentKeepingOnlyUnreservedCharacters() {
        #expect(WebDAVLayout.encode("AZaz09-._~") == "AZaz09-._~")
        #expect(WebDAVLayout.encode("with space.txt") == "with%20space.txt")
        #expect(WebDAVLayout.encode("naïve café") == "na%C3%AFve%20caf%C3%A9")
        #expect(WebDAVLayout.encode("日本") == "%E6%97%A5%E6%9C%AC")
        #expect(WebDAVLayout.encode("a?b#c%d+e&f;g=h:i@j'k") == "a%3Fb%23c%25d%2Be%26f%3Bg%3Dh%3Ai%40j%27k")
        #expect(WebDAVLayout.encode("\u{1}\u{7F}") == "%01%7F")
        #expect(WebDAVLayout.encode("") == "")
    }

    @Test func aNameThatIsNotUTF8IsEncodedAsItsBytes() {
        let directory = RawPath.string(fromBytes: Array("dir".utf8) + [0xFF])
        let file = RawPath.string(fromBytes: [0x61, 0xC3, 0x28, 0x80, 0x2E, 0x62])  // a, a broken é, 0x80, .b
        #expect(WebDAVLayout.encode(directory[...]) == "dir%FF")
        #expect(WebDAVLayout.url(of: directory + "/" + file, under: prefix) == prefix + "/dir%FF/a%C3%28%80.b")
        #expect(WebDAVLayout.collections(above: WebDAVLayout.url(of: directory + "/" + file, under: prefix), under: prefix)
            == [prefix + "/", prefix + "/dir%FF/"])
    }

    @Test func fileURLsSitUnderThePrefixWithOneSlash() {
        #expect(WebDAVLayout.url(of: "a/with space.txt", under: prefix) == prefix + "/a/with%20space.txt")
        #expect(WebDAVLayout.url(of: "a/with space.txt", under: prefix + "/") == prefix + "/a/with%20space.txt")
        #expect(WebDAVLayout.url(of: "é/naïve café.bin", under: prefix) == prefix + "/%C3%A9/na%C3%AFve%20caf%C3%A9.bin")
        #expect(WebDAVLayout.url(of: "top.txt", under: "http://h/") == "http://h/top.txt")
    }

    @Test func aFileNeedsThePrefixAndEveryDirectoryAboveItParentsFirst() {
        let url = WebDAVLayout.url(of: "a b/é/c/d/file.txt", under: prefix)
        #expect(WebDAVLayout.collections(above: url, under: prefix) == [
            prefix + "/",
            prefix + "/a%20b/",
            prefix + "/a%20b/%C3%A9/",
            prefix + "/a%20b/%C3%A9/c/",
            prefix + "/a%20b/%C3%A9/c/d/",
        ])
        // A trailing slash on the prefix changes nothing.
        #expect(WebDAVLayout.collections(above: url, under: prefix + "/") == WebDAVLayout.collections(above: url, under: prefix))
    }

    @Test func aTopLevelFileNeedsOnlyThePrefix() {
        let url = WebDAVLayout.url(of: "top.txt", under: prefix)
        #expect(WebDAVLayout.collections(above: url, under: prefix) == [prefix + "/"])
        let nested = "http://h:1/a/b/c"
        #expect(WebDAVLayout.collections(above: WebDAVLayout.url(of: "f", under: nested), under: nested) == [nested + "/"])
    }

    @Test func theServersRootIsNeverMade() {
        for root in ["http://h:1", "http://h:1/", "https://user:pw@[::1]:8443/"] {
            #expect(WebDAVLayout.collections(above: WebDAVLayout.url(of: "top.txt", under: root), under: root) == [], "\(root)")
        }
        let url = WebDAVLayout.url(of: "x/y.txt", under: "http://h:1")
        #expect(WebDAVLayout.collections(above: url, under: "http://h:1") == ["http://h:1/x/"])
    }

    @Test func aURLOutsideThePrefixNeedsNothing() {
        #expect(WebDAVLayout.collections(above: "http://other/backup/a/b.txt", under: prefix) == [])
        #expect(WebDAVLayout.collections(above: prefix + "/", under: prefix) == [])
        #expect(WebDAVLayout.collections(above: prefix, under: prefix) == [])
    }
}

@Suite struct MkcolAnswerTests {
    @Test func createdExistsOrFailed() {
        // rclone answers 201 for a collection that already existed, too.
        for status in [200, 201, 204] { #expect(MkcolAnswer(status: status) == .created, "\(status)") }
        // RFC 4918: 405 for an existing resource; 501 from a server without MKCOL (its PUT decides).
        for status in [405, 501] { #expect(MkcolAnswer(status: status) == .exists, "\(status)") }
        for status in [301, 302, 400, 401, 403, 404, 409, 412, 415, 500, 503, 507] {
            #expect(MkcolAnswer(status: status) == .failed, "\(status)")
        }
    }

    @Test func aRefusedCollectionIsRetriedOnlyForTransientStatuses() {
        let policy = RetryPolicy()
        let url = "http://h/backup/a/"
        for status in [408, 429, 500, 502, 503, 504] { #expect(policy.isRetryable(.collection(url: url, status: status))) }
        for status in [401, 403, 404, 409, 507] { #expect(!policy.isRetryable(.collection(url: url, status: status))) }
        let error = TransferError.collection(url: "http://u:secret@h/backup/a%20b/", status: 409)
        #expect(error.code == "collection")
        #expect(error.status == 409)
        #expect(error.message == "cannot create the collection http://u:<redacted>@h/backup/a%20b/: MKCOL was answered HTTP 409")
    }
}
