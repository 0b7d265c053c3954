#if canImport(Glibc)
import Glibc
#endif

/// The canonical spelling of a download's destination, by which two jobs are found to write
/// the same file: `.` and `..` resolved, and every symlinked directory of the part that exists
/// replaced by its target. (The file itself is not followed: a rename replaces a symlink, not
/// what it points to.) Reads the file system: call it off the loop thread.
enum DestinationPath {
    static func canonical(_ path: String) -> String {
        var directories: [String: String]?
        return canonical(path, directories: &directories)
    }

    /// The same, remembering in `directories` (unless nil) the canonical spelling of the
    /// directory each file is in, whether it exists yet or not: the files of a batch share a
    /// few directories, which realpath(3) would otherwise read link by link for every file.
    static func canonical(_ path: String, directories: inout [String: String]?) -> String {
        // A normal path's directory is its spelling up to its last slash: no splitting needed.
        if directories != nil, StatePaths.isNormal(path), let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")),
           slash != path.utf8.startIndex, let directory = directories?[String(path[..<slash])] {
            return StatePaths.absolute(directory + path[slash...])
        }
        var parents = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let name = parents.popLast() else { return "/" }
        let parent = "/" + parents.joined(separator: "/")
        if let directory = directories?[parent] { return StatePaths.absolute(directory + "/" + name) }
        var below: [String] = []
        // The deepest existing ancestor, resolved by realpath(3); what is below it, by its spelling.
        while true {
            let ancestor = "/" + parents.joined(separator: "/")
            if let resolved = RawPath.withCString(ancestor, { realpath($0, nil) }) {
                defer { free(resolved) }
                let directory = ([RawPath.string(cString: resolved)] + below).joined(separator: "/")
                directories?[parent] = directory
                return StatePaths.absolute(directory + "/" + name)
            }
            guard let last = parents.popLast() else { return StatePaths.absolute(path) }
            below.insert(last, at: 0)
        }
    }

    /// The canonical spelling of a directory, for `isInside`.
    static func root(of directory: String) -> String {
        canonical(directory + "/.")
    }

    /// Whether `canonical` lies inside the directory whose canonical spelling is `root`.
    static func isInside(_ canonical: String, root: String) -> Bool {
        canonical.hasPrefix(root == "/" ? "/" : root + "/")
    }
}

/// Why a download may not write to a destination.
enum DestinationRefusal: Error, Equatable, Sendable {
    /// Another unfinished job owns it.
    case taken(path: String, owner: JobID)
    /// It is inside the daemon's state directory (its database, socket or lock).
    case stateDirectory(path: String, directory: String)

    var message: String {
        switch self {
        case .taken(let path, let owner):
            "\(path) is already the destination of job \(owner) (cancel it, or wait until it ends)"
        case .stateDirectory(let path, let directory):
            "\(path) is inside transferd's state directory \(directory); choose another destination"
        }
    }
}
