/// Where the files of a directory backup go under a URL prefix, and which WebDAV collections a
/// PUT there needs first: RFC 4918 servers refuse a PUT whose parent collection does not exist
/// (404 or 409), so the prefix and every directory above the file are created with MKCOL,
/// top down. Pure. Thread: any.
public enum WebDAVLayout {
    /// `PREFIX/RELATIVE/PATH`, each segment of the relative path percent-encoded.
    public static func url(of relativePath: String, under prefix: String) -> String {
        base(prefix) + relativePath.split(separator: "/", omittingEmptySubsequences: false).map(encode).joined(separator: "/")
    }

    /// One path segment (a `RawPath`) with every byte but RFC 3986's unreserved characters
    /// percent-encoded: a space is `%20`, `é` is `%C3%A9`, `/` inside a name `%2F`, and a byte
    /// of a name that is not UTF-8 is itself (`%FF`).
    public static func encode(_ segment: Substring) -> String {
        var encoded = ""
        for byte in RawPath.bytes(of: segment) {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 0xF)])
            }
        }
        return encoded
    }

    /// The collections a PUT to `url` needs, parents first, each ending in `/` (nginx and
    /// others create a collection only for a URL that ends in one): the prefix itself (unless
    /// it is the server's root, which always exists), then each directory between it and the
    /// file. None for a URL that is not under the prefix.
    public static func collections(above url: String, under prefix: String) -> [String] {
        let base = base(prefix)
        guard url.hasPrefix(base), url.count > base.count else { return [] }
        var collections = isRoot(base) ? [] : [base]
        var path = base
        for directory in url.dropFirst(base.count).split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            path += directory + "/"
            collections.append(path)
        }
        return collections
    }

    /// The prefix as every file URL starts: with one trailing `/`.
    private static func base(_ prefix: String) -> String { prefix.hasSuffix("/") ? prefix : prefix + "/" }

    /// `scheme://authority/` with nothing after the first `/` of the path.
    private static func isRoot(_ base: String) -> Bool {
        guard let scheme = base.firstRange(of: "://") else { return false }
        return base[scheme.upperBound...].firstIndex(of: "/") == base.index(before: base.endIndex)
    }

    private static let hexDigits = Array("0123456789ABCDEF")
}
