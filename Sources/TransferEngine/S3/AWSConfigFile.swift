/// The INI files of the AWS CLI (`~/.aws/credentials`, `~/.aws/config`), read as botocore's
/// configparser reads them: `[section]` headers, `key = value` (or `key: value`) lines, keys
/// without case, whole-line `#` and `;` comments, whitespace around everything trimmed,
/// indented lines after a key (nested settings such as `s3 =`) belonging to that key and
/// ignored, the last of a key given twice counting. Pure. Thread: a value; any.
struct AWSConfigFile: Equatable, Sendable {
    /// Section name → key (lowercased) → value.
    private(set) var sections: [String: [String: String]] = [:]

    init(parsing text: String) {
        var section: String?
        var inKey = false
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            let indented = line.first == " " || line.first == "\t"
            let trimmed = line.trimmingWhitespace
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if indented, inKey { continue }  // a nested setting of the key above
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") {
                let name = String(trimmed.dropFirst().dropLast().trimmingWhitespace)
                section = name
                if sections[name] == nil { sections[name] = [:] }
                inKey = false
                continue
            }
            guard let section, let delimiter = trimmed.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                inKey = false
                continue
            }
            let key = trimmed[..<delimiter].trimmingWhitespace.lowercased()
            let value = trimmed[trimmed.index(after: delimiter)...].trimmingWhitespace
            sections[section, default: [:]][key] = String(value)
            inKey = true
        }
    }

    func section(_ name: String) -> [String: String]? { sections[name] }
}

extension Substring {
    /// Without the spaces and tabs at either end.
    fileprivate var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
