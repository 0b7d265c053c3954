/// A backup's `--include`, `--exclude` and `--exclude-from` rules in the order they were given,
/// rsync's way: the first rule that matches a path decides (include or exclude), and a path no
/// rule matches is included. A directory is tested when the walk reaches it, and an excluded one
/// is not walked at all, so nothing below it is even read: `--include '*.jpg' --exclude '*'`
/// excludes every subdirectory too (`--include '*/'` first keeps them). Pure value. Thread: any.
public struct FilterRules: Equatable, Sendable {
    public var rules: [FilterRule]

    public init(_ rules: [FilterRule] = []) { self.rules = rules }

    public var isEmpty: Bool { rules.isEmpty }

    /// The first rule that matches `relativePath`, nil when none does.
    public func firstMatch(_ relativePath: String, isDirectory: Bool) -> FilterRule? {
        rules.first { $0.matches(relativePath, isDirectory: isDirectory) }
    }

    /// The rule that excludes `relativePath`, nil when it is included (by a rule or by none).
    public func exclusion(of relativePath: String, isDirectory: Bool) -> FilterRule? {
        firstMatch(relativePath, isDirectory: isDirectory).flatMap { $0.action == .exclude ? $0 : nil }
    }

    /// The exclude rules of an `--exclude-from` file's text: one pattern a line, taken as it is
    /// (spaces included); lines that are empty or only spaces and tabs, and lines starting with
    /// `#`, are not rules; a `\r` before the `\n` is dropped. Each rule's origin is
    /// `--exclude-from FILE:LINE`.
    public static func excludeFile(_ text: String, named file: String) throws(GlobSyntaxError) -> [FilterRule] {
        var rules: [FilterRule] = []
        // By scalars: "\r\n" is one Character, and would hide the `\n`.
        for (index, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var pattern = line
            if pattern.last == "\r" { pattern.removeLast() }
            guard !pattern.allSatisfy({ $0 == " " || $0 == "\t" }), pattern.first != "#" else { continue }
            rules.append(try FilterRule(.exclude, String(pattern),
                                        origin: "--exclude-from \(file):\(index + 1)"))
        }
        return rules
    }
}
