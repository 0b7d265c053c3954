import Testing
@testable import TransferEngine

/// The name a download into a directory gets from the server, made safe.
@Suite struct ServerFileNameTests {
    @Test func contentDispositionFirstItsExtendedFormBeforeThePlainOne() {
        let url = "http://h/path/file.bin"
        #expect(ServerFileName.choose(contentDisposition: #"attachment; filename="report 2026.pdf""#, url: url) == "report 2026.pdf")
        #expect(ServerFileName.choose(contentDisposition: "attachment; filename=plain.txt", url: url) == "plain.txt")
        #expect(ServerFileName.choose(contentDisposition: #"attachment; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt"#,
                                      url: url) == "€ rates.txt")
        #expect(ServerFileName.choose(contentDisposition: "attachment; FILENAME*=iso-8859-1'en'%A3%20sterling.txt", url: url) == "£ sterling.txt")
        #expect(ServerFileName.choose(contentDisposition: #"inline; filename="a \"quoted\" name.txt""#, url: url) == #"a "quoted" name.txt"#)
        #expect(ServerFileName.choose(contentDisposition: "attachment", url: url) == "file.bin", "no filename: the URL's")
        #expect(ServerFileName.choose(contentDisposition: "attachment; filename*=UTF-8''%FF%FE", url: url) == "file.bin",
                "not UTF-8: the URL's")
    }

    @Test func theLastSegmentOfTheURLPercentDecodedWithoutQueryOrFragment() {
        #expect(ServerFileName.choose(contentDisposition: nil, url: "https://h/a/b/My%20File.tar.gz?sig=x#frag") == "My File.tar.gz")
        #expect(ServerFileName.choose(contentDisposition: nil, url: "https://h/a/dir/") == "dir")
        #expect(ServerFileName.choose(contentDisposition: nil, url: "https://h/") == ServerFileName.fallback)
        #expect(ServerFileName.choose(contentDisposition: nil, url: "https://h") == ServerFileName.fallback)
    }

    @Test func namesAreMadeSafe() {
        let url = "http://h/x"
        func named(_ filename: String) -> String {
            ServerFileName.choose(contentDisposition: "attachment; filename=\"\(filename)\"", url: url)
        }
        #expect(named("../../etc/passwd") == "etcpasswd")
        #expect(named("..") == "x", "nothing left: the URL's")
        #expect(named(".bashrc") == "bashrc")
        #expect(named("a\u{1B}[31mred\u{7}.txt") == "a[31mred.txt")
        #expect(named("evil\u{202E}txt.exe") == "eviltxt.exe")
        #expect(named("back\\slash") == "backslash")
        let long = String(repeating: "é", count: 300) + ".tar.gz"
        let cut = named(long)
        #expect(cut.utf8.count <= 255 && cut.hasSuffix(".gz") && cut.hasPrefix("éé"))
        #expect(ServerFileName.choose(contentDisposition: nil, url: "http://h/%2e%2e") == ServerFileName.fallback)
        #expect(ServerFileName.choose(contentDisposition: nil, url: "http://h/a%2Fb") == "ab")
    }

    @Test func numberedNamesKeepTheExtension() {
        #expect(ServerFileName.numbered("report.pdf", 1) == "report (1).pdf")
        #expect(ServerFileName.numbered("README", 2) == "README (2)")
        #expect(ServerFileName.numbered(".profile", 1) == ".profile (1)")
    }
}
