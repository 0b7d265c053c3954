import Testing
@testable import TransferEngine

@Suite struct HostKeyTests {
    /// URLs of the common shape, read in place: the same scheme, host and port as Foundation's.
    static let plain = [
        "http://127.0.0.1:8080/small/f1", "https://example.com/a?b#c", "http://example.com", "HTTP://Example.COM:80/",
        "https://user:secret@files.example.org:8443/x", "http://h:/path", "http://h:0080/", "s3://bucket.s3.local:9000/key",
        "ftp://h_1.example/f", "http://a@b@c/", "http://h?q=@x", "http://h#frag@x", "http://h:65535", "ht-tp+x.y://h/",
        "http://h/a b", "http://h/é", "http://@h/", "http://h:0/", "https://files.example.org:8443?x", "http://h:8080#f",
        "Http://h:8080/",
    ]
    /// URLs `plain` leaves to Foundation.
    static let other = [
        "http://[::1]:8080/", "http://h%41/", "http://hé/", "http://h:65536/", "http://h:1x/", "http:///path",
        "mailto:a@b", "http:/h/", "1http://h/", "http://h\\x/", "://h/", "",
    ]

    @Test(arguments: plain) func theCommonShapeIsReadInPlaceAsFoundationReadsIt(_ url: String) throws {
        let plain = try #require(HostKey.plain(url))
        let foundation = try #require(HostKey.foundation(url))
        #expect(plain == foundation)
        #expect(HostKey.parse(url)?.key == "\(foundation.scheme)://\(foundation.host):\(foundation.port)")
        #expect(HostKey.key(url) == HostKey.parse(url)?.key)
    }

    @Test(arguments: other) func anyOtherShapeIsLeftToFoundation(_ url: String) {
        #expect(HostKey.plain(url) == nil)
        #expect(HostKey.parse(url)?.key == HostKey.foundation(url).map { origin in
            let host = origin.host.contains(":") ? "[\(origin.host)]" : origin.host
            return "\(origin.scheme)://\(host):\(origin.port)"
        })
        #expect(HostKey.key(url) == HostKey.parse(url)?.key)
    }
}
