/// A URL typed without a scheme (`localhost:8080/f.bin`, `example.com/a.iso`) is taken as
/// `http://`, as curl takes it, and the CLI says so; libcurl's own parser would refuse it with
/// "Unsupported number of slashes".
enum DefaultScheme {
    /// `url`, with `http://` in front when it names no scheme; the note to print when it did.
    /// Only a host and a port or a path make one (`localhost:8080`, `example.com/a.iso`): a bare
    /// word (`notaurl`) stays a malformed URL, and `http:/x` is one written wrong, not one
    /// without a scheme.
    static func apply(_ url: String) -> (url: String, note: String?) {
        guard !url.contains("://"), let first = url.unicodeScalars.first,
              first.properties.isAlphabetic || ("0"..."9").contains(first) else { return (url, nil) }
        let authority = url.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let colon = authority.firstIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            guard !port.isEmpty, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else { return (url, nil) }
        } else {
            guard authority.count < url.count, url[authority.endIndex...].hasPrefix("/") else { return (url, nil) }
        }
        let guessed = "http://" + url
        return (guessed, "'\(url)' names no scheme: taken as \(guessed), as curl does")
    }
}
