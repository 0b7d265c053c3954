/// The name a download gets when its destination is a directory (`-O`, `-o DIR/`): the
/// server's `Content-Disposition` filename (RFC 6266; `filename*=UTF-8''…` first), else the
/// last path segment of the final URL, percent-decoded — made safe to create in that
/// directory: no `/` or NUL, no control characters, not `.` or `..`, no leading dots (a
/// server must not plant `.bashrc`), at most 255 bytes (the extension kept), never empty.
/// Pure; unit-tested.
public enum ServerFileName {
    public static let fallback = "download"
    static let maxBytes = 255

    public static func choose(contentDisposition: String?, url: String) -> String {
        if let header = contentDisposition, let name = fromContentDisposition(header).map(sanitize), !name.isEmpty {
            return name
        }
        let name = sanitize(lastSegment(of: url))
        return name.isEmpty ? fallback : name
    }

    /// The filename a `Content-Disposition` value names: `filename*` (RFC 8187, UTF-8 or
    /// ISO-8859-1) before `filename` (a token or a quoted string), nil when neither is there.
    static func fromContentDisposition(_ value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(value) {
            switch parameter.name.lowercased() {
            case "filename*": extended = extended ?? decodeExtended(parameter.value)
            case "filename": plain = plain ?? parameter.value
            default: continue
            }
        }
        return extended ?? plain
    }

    /// `name=value` pairs after the disposition type, quoted strings unquoted.
    private static func parameters(_ value: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        var rest = Substring(value)
        guard let first = rest.firstIndex(of: ";") else { return [] }
        rest = rest[rest.index(after: first)...]
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: " \t")
            rest = rest[rest.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parameterValue = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped { parameterValue.append(character); escaped = false }
                    else if character == "\\" { escaped = true }
                    else if character == "\"" { break }
                    else { parameterValue.append(character) }
                }
                rest = rest.drop { $0 != ";" }
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                parameterValue = rest[..<end].trimmingCharacters(in: " \t")
                rest = rest[end...]
            }
            result.append((name, parameterValue))
        }
        return result
    }

    /// `UTF-8''%E2%82%AC%20rates.txt` (charset, optional language, percent-encoded bytes).
    private static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let bytes = PercentEncoding.decode(parts[2])
        switch parts[0].lowercased() {
        case "utf-8": return String(validating: bytes, as: UTF8.self)
        case "iso-8859-1": return String(bytes.map { Character(Unicode.Scalar($0)) })
        default: return nil
        }
    }

    /// The last non-empty path segment of `url` (no query, no fragment), percent-decoded.
    static func lastSegment(of url: String) -> String {
        var path = Substring(url)
        if let scheme = path.firstRange(of: "://") { path = path[scheme.upperBound...] }
        path = path.prefix { $0 != "?" && $0 != "#" }
        guard let slash = path.firstIndex(of: "/") else { return "" }
        let segment = path[slash...].split(separator: "/").last ?? ""
        return String(decoding: PercentEncoding.decode(segment), as: UTF8.self)
    }

    /// Safe as one name in a directory.
    static func sanitize(_ name: String) -> String {
        var cleaned = String(name.unicodeScalars.filter { scalar in
            scalar != "/" && scalar != "\\" && scalar.value >= 0x20 && scalar.value != 0x7F
                && !(0x80...0x9F).contains(scalar.value) && !(0x202A...0x202E).contains(scalar.value)
                && !(0x2066...0x2069).contains(scalar.value)
        }.map(Character.init))
        cleaned = cleaned.trimmingCharacters(in: " \t")
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        return truncated(cleaned)
    }

    /// At most `maxBytes` of UTF-8, whole characters, keeping a short extension.
    private static func truncated(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        var stem = name
        var suffix = ""
        if let dot = name.lastIndex(of: "."), name.distance(from: dot, to: name.endIndex) <= 16 {
            stem = String(name[..<dot])
            suffix = String(name[dot...])
        }
        while stem.utf8.count + suffix.utf8.count > maxBytes { stem.removeLast() }
        return stem + suffix
    }

    /// `name (1).ext`, `name (2).ext`, …: the `number`th other name for `name`.
    public static func numbered(_ name: String, _ number: Int) -> String {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return truncated("\(name[..<dot]) (\(number))\(name[dot...])")
        }
        return truncated("\(name) (\(number))")
    }
}

private extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
