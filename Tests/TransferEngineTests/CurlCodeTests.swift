import CTransferSupport
import Testing
@testable import TransferEngine

@Suite struct CurlCodeTests {
    @Test func everyCodeIsInTheTableExactlyOnce() {
        let listed = CurlCode.table.flatMap { $0.1.map(\.rawValue) }
        #expect(Set(listed).count == listed.count, "a code is listed twice")
        #expect(Set(listed) == Set(0..<CurlCode.last), "the table covers exactly 0 ..< CURL_LAST")
    }

    @Test func onlyUnreachableAndNetworkFailuresAreRetried() {
        let retried = Set(CurlCode.Category.allCases.filter(\.isRetried))
        #expect(retried == [.unreachable, .network])
        let retriedCodes = Set((0..<CurlCode.last).map(CurlCode.init(rawValue:)).filter { $0.category.isRetried }.map(\.rawValue))
        let expected: Set<UInt32> = Set([CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY,
                                         CURLE_PARTIAL_FILE, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR, CURLE_RECV_ERROR,
                                         CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_WEIRD_SERVER_REPLY,
                                         CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR, CURLE_AGAIN, CURLE_PROXY,
                                         CURLE_SSL_SHUTDOWN_FAILED, CURLE_NO_CONNECTION_AVAILABLE].map(\.rawValue))
        #expect(retriedCodes == expected)
    }

    @Test func requestAndLocalFailuresAreNeverRetried() {
        let policy = RetryPolicy()
        let permanent: [(CURLcode, String)] = [
            (CURLE_URL_MALFORMAT, "request"), (CURLE_BAD_FUNCTION_ARGUMENT, "request"),
            (CURLE_TOO_MANY_REDIRECTS, "request"), (CURLE_NOT_BUILT_IN, "request"), (CURLE_UNKNOWN_OPTION, "request"),
            (CURLE_SEND_FAIL_REWIND, "request"), (CURLE_WRITE_ERROR, "io"), (CURLE_READ_ERROR, "io"),
            (CURLE_OUT_OF_MEMORY, "io"), (CURLE_FAILED_INIT, "io"), (CURLE_PEER_FAILED_VERIFICATION, "tls"),
            (CURLE_REMOTE_FILE_NOT_FOUND, "request"), (CURLE_OBSOLETE20, "request"),
        ]
        for (raw, code) in permanent {
            let error = TransferError(CurlCode(raw), detail: nil, moving: false, stallSeconds: 60)
            #expect(error.code == code, "\(raw.rawValue)")
            #expect(!policy.isRetryable(error), "\(raw.rawValue) is never retried")
            #expect(!CurlCode(raw).category.isRetried)
        }
        // An unsupported protocol during a transfer can only come from a redirect.
        #expect(TransferError(CurlCode(CURLE_UNSUPPORTED_PROTOCOL), detail: nil, moving: false, stallSeconds: 60)
                == .insecureRedirect(to: nil))
        // ... or from an answer without a status line, which is no redirect at all.
        let http09 = TransferError(CurlCode(CURLE_UNSUPPORTED_PROTOCOL), detail: "Received HTTP/0.9 when not allowed",
                                   moving: false, stallSeconds: 60)
        #expect(http09.code == "protocol" && http09.message.contains("without an HTTP status line"))
        #expect(CurlCode(rawValue: CurlCode.last + 7).category == .request, "a code newer than the table is not retried")
    }

    @Test func transientFailuresAreRetried() {
        let policy = RetryPolicy()
        for raw in [CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE] {
            #expect(policy.isRetryable(TransferError(CurlCode(raw), detail: "x", moving: true, stallSeconds: 60)))
        }
        #expect(TransferError(CurlCode(CURLE_OPERATION_TIMEDOUT), detail: nil, moving: true, stallSeconds: 9)
                == .stalled(seconds: 9))
    }
}

@Suite struct CurlURLTests {
    @Test func acceptsWhatATransferAccepts() throws {
        #expect(try CurlURL.parse("HTTPS://Example.com:8443/a?b=c#d") == CurlURL.Parts(scheme: "https", host: "Example.com"))
        // libcurl sends a raw non-ASCII path percent-encoded: it is not refused.
        #expect(try CurlURL.parse("http://127.0.0.1/é.bin").host == "127.0.0.1")
        #expect(try CurlURL.parse("http://[::1]:80/x").host == "[::1]")
    }

    @Test func refusesWhatATransferRefuses() {
        for url in ["http://h/with space.bin", "http://127.0.0.1:99999/x", "http://a b/", "http://[::1/x", "notaurl",
                    "http://", "http://h/a\nb"] {
            #expect(throws: CurlURLCode.self, "\(url)") { try CurlURL.parse(url) }
        }
    }

    @Test func readsThePlainShapeAsLibcurlDoes() throws {
        for url in ["http://127.0.0.1:23474/small/f1", "https://example.com", "http://a-b.example.org:8080/x?y=1&z=%41#f",
                    "https://Example.COM/e", "http://h?q", "http://h#f",
                    "http://255.255.255.255:65535/", "http://0.0.0.0/x"] {
            let plain = try #require(CurlURL.plain(url), "\(url)")
            #expect(plain == (try CurlURL.parse(url)), "\(url)")
        }
        // libcurl decides these: other schemes and cases, numeric hosts it rewrites, users, IPv6,
        // ports out of range or with leading zeros, spaces, backslashes, non-ASCII bytes.
        for url in ["HTTP://h/", "ftp://h/", "http://127.1/", "http://0x7f.0.0.1/", "http://1.2.3.256/", "http://01.2.3.4/",
                    "http://u:p@h/", "http://[::1]/", "http://h:0/", "http://h:080/", "http://h:65536/", "http://h:/",
                    "http://h/a b", "http://h/a\\b", "http://h/é", "http://-h/", "http://h..i/", "http://h./", "http:///x",
                    "http://", "http:h/", "http://h:8a/"] {
            #expect(CurlURL.plain(url) == nil, "\(url)")
        }
    }

    /// Every URL `plain` reads, libcurl accepts with the same scheme and host: URLs generated from
    /// the pieces near the shape's edges.
    @Test func plainNeverAcceptsWhatLibcurlRefuses() throws {
        let schemes = ["http://", "https://", "HTTP://", "http:/", "htp://"]
        let hosts = ["h", "H1", "a-b", "a.b", "a..b", "-a", "a-", "1.2.3.4", "1.2.3", "256.1.1.1", "0x1.2.3.4", "1a", "a_b",
                     "a%20b", "[::1]", "u@h", "", ".a", "a."]
        let ports = ["", ":", ":1", ":80", ":080", ":65535", ":65536", ":99999", ":1a", ":+1"]
        let rests = ["", "/", "/a/b", "?q=1", "#f", "/a b", "/a\tb", "/%zz", "/a\\b", "/~!$&'()*+,;=:@", "/\u{7F}", "/é"]
        var read = 0
        for scheme in schemes {
            for host in hosts {
                for port in ports {
                    for rest in rests {
                        let url = scheme + host + port + rest
                        guard let plain = CurlURL.plain(url) else { continue }
                        read += 1
                        #expect(plain == (try? CurlURL.parse(url)), "\(url)")
                    }
                }
            }
        }
        #expect(read > 300, "the generated URLs should exercise the plain shape")
    }

    @Test func validationNamesLibcurlsReasonOnOneLine() {
        func refusal(_ url: String) -> String? {
            do { try JobValidation.validateURL(url); return nil } catch { return error.message }
        }
        #expect(refusal("http://127.0.0.1:1/ok.bin") == nil)
        #expect(refusal("http://h/with space.bin")?.contains("%20") == true)
        #expect(refusal("http://127.0.0.1:99999/x")?.contains("65535") == true)
        #expect(refusal("ftp://h/x")?.hasPrefix("unsupported URL scheme 'ftp'") == true)
        #expect(refusal("notaurl")?.contains("http://") == true)
        #expect(refusal("http://h/a\r\nb")?.contains("\n") == false)
        #expect(refusal("http://u:pw@h:99999/x")?.contains("pw") == false, "a refused URL's secrets stay hidden")
    }
}
