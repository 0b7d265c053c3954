/// One `--include` or `--exclude` rule of a backup, with rsync's meaning. The pattern (a `Glob`)
/// is matched against a path relative to the backed-up directory (`a/b/x.tmp`):
///
/// - a leading `/` anchors it at the directory's root: `/cache` is `cache` at the top only;
/// - otherwise it matches at the end of the path, from the start of any component: `*.tmp`
///   and `b/x.tmp` both match `a/b/x.tmp`, `x/x.tmp` does not;
/// - a trailing `/` makes it match directories only: `cache/` is not a file called `cache`;
/// - as in rsync, a leading `**/` also matches at the root (`**/cache` matches `cache`), and a
///   trailing `/***` also matches the directory itself (`cache/***` is `cache/` and `cache/**`).
///
/// Pure value. Thread: any.
public struct FilterRule: Equatable, Sendable, CustomStringConvertible {
    public enum Action: String, Equatable, Sendable {
        case include, exclude
    }

    public let action: Action
    /// The pattern as given, `/` and all.
    public let pattern: String
    /// Where it was given, for messages: `--exclude`, `--include`, `--exclude-from FILE:LINE`.
    public let origin: String
    /// A leading `/`: matched against the whole relative path.
    public let anchored: Bool
    /// A trailing `/`: matches directories only.
    public let directoryOnly: Bool
    let glob: Glob
    /// A leading `**/`: the rest of the pattern, matched at the root too.
    private let atRoot: Glob?
    /// A trailing `/***`: the pattern before it, which matches the directory itself.
    private let directoryItself: Glob?

    /// Compiles `pattern`; an empty one, or one the glob syntax refuses, is refused naming `origin`.
    public init(_ action: Action, _ pattern: String, origin: String) throws(GlobSyntaxError) {
        self.action = action
        self.pattern = pattern
        self.origin = origin
        var body = Substring(pattern)
        anchored = body.hasPrefix("/")
        if anchored { body.removeFirst() }
        directoryOnly = body.hasSuffix("/")
        if directoryOnly { body.removeLast() }
        guard !body.isEmpty else {
            throw GlobSyntaxError("\(origin) '\(pattern)': an empty pattern matches nothing")
        }
        do {
            glob = try Glob(String(body))
            let leadingStars = body.prefix { $0 == "*" }
            let rest = body.dropFirst(leadingStars.count)
            atRoot = leadingStars.count >= 2 && rest.hasPrefix("/") && rest.count > 1 ? try Glob(String(rest.dropFirst())) : nil
            directoryItself = body.hasSuffix("/***") && body.count > 4 ? try Glob(String(body.dropLast(4))) : nil
        } catch {
            throw GlobSyntaxError("\(origin) '\(pattern)': \(error.reason)")
        }
    }

    /// Whether the rule applies to `relativePath` (no leading or trailing `/`), a directory or not.
    public func matches(_ relativePath: String, isDirectory: Bool) -> Bool {
        guard isDirectory || !directoryOnly else { return false }
        if glob.matches(relativePath, anchored: anchored) { return true }
        if let atRoot, atRoot.matches(relativePath) { return true }
        if isDirectory, let directoryItself, directoryItself.matches(relativePath, anchored: anchored) { return true }
        return false
    }

    /// The rule as it was given, pattern single-quoted as for a shell: `--exclude '*.tmp'`.
    public var description: String {
        "\(origin) '\(pattern.replacing("'", with: "'\\''"))'"
    }
}
