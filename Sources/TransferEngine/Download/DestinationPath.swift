#if canImport(Glibc)
import Glibc
#endif

/// The canonical spelling of a download's destination, by which two jobs are found to write
/// the same file: `.` and `..` resolved, and every symlinked directory of the part that exists
/// replaced by its target. (The file itself is not followed: a rename replaces a symlink, not
/// what it points to.) Reads the file system: call it off the loop thread.
enum DestinationPath {
    static func canonical(_ path: String) -> String {
        var parents = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let name = parents.popLast() else { return "/" }
        var rest = [name]
        // The deepest existing ancestor, resolved by realpath(3); what is below it, by its spelling.
        while true {
            let ancestor = "/" + parents.joined(separator: "/")
            if let resolved = realpath(ancestor, nil) {
                defer { free(resolved) }
                return lexical(String(cString: resolved) + "/" + rest.joined(separator: "/"))
            }
            guard let last = parents.popLast() else { return lexical(path) }
            rest.insert(last, at: 0)
        }
    }

    /// `.` and `..` removed by spelling alone, `..` at the root staying at the root.
    static func lexical(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": _ = components.popLast()
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }
}

/// A download's destination is already owned by another unfinished job.
struct DestinationTaken: Error, Equatable, Sendable {
    var path: String
    var owner: JobID

    var message: String {
        "\(path) is already the destination of job \(owner) (cancel it, or wait until it ends)"
    }
}
