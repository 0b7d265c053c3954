#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon keeps its database and socket (SPEC.md defaults), shared by both programs.
public struct StatePaths: Equatable, Sendable {
    public var directory: String
    public var socket: String
    public var database: String { directory + "/transfers.db" }
    public var lock: String { directory + "/transferd.lock" }

    /// `--state-dir`, else `$TRANSFERD_STATE_DIR`, else `$XDG_STATE_HOME/transferd`, else
    /// `~/.local/state/transferd`; the socket is `--socket`, else `$TRANSFERD_SOCKET`, else in the directory.
    public init(stateDirectory: String?, socket: String?, environment: (String) -> String? = StatePaths.environment) {
        let directory = stateDirectory.nonEmpty
            ?? environment("TRANSFERD_STATE_DIR").nonEmpty
            ?? environment("XDG_STATE_HOME").nonEmpty.map { $0 + "/transferd" }
            ?? ((environment("HOME").nonEmpty ?? "/") + "/.local/state/transferd")
        self.directory = Self.absolute(directory)
        self.socket = Self.absolute(socket.nonEmpty ?? environment("TRANSFERD_SOCKET").nonEmpty ?? (self.directory + "/transferd.sock"))
    }

    /// The command that starts a daemon these paths reach, shell-quoted: `transferd
    /// --state-dir DIR`, with `--socket PATH` when the socket is not the directory's own.
    public var daemonCommand: String {
        var words = ["transferd", "--state-dir", directory]
        if socket != directory + "/transferd.sock" { words += ["--socket", socket] }
        return words.map(CurlCommand.quote).joined(separator: " ")
    }

    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// `path` made absolute against the working directory (and trailing slashes dropped).
    public static func absolute(_ path: String) -> String {
        if isNormal(path) { return path }  // most paths, and the cost of splitting them was measured
        var result = path
        if !result.hasPrefix("/") {
            var cwd = "/"
            if let pointer = getcwd(nil, 0) {
                cwd = RawPath.string(cString: pointer)
                free(pointer)
            }
            result = (cwd == "/" ? "" : cwd) + "/" + result
        }
        var components: [Substring] = []
        for component in result.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": if !components.isEmpty { components.removeLast() }
            default: components.append(component)
            }
        }
        return "/" + components.joined(separator: "/")
    }

    /// `path` is absolute and has no empty, `.` or `..` component: `absolute` leaves it as it is.
    static func isNormal(_ path: String) -> Bool {
        // A native string's bytes are read in place: walking `String.UTF8View` by its indices
        // was 5 % of queueing a manifest, asked twice for each destination (BENCHMARKS.md).
        path.utf8.withContiguousStorageIfAvailable { isNormal(bytes: $0) } ?? isNormal(bytes: path.utf8)
    }

    private static func isNormal(bytes: some Collection<UInt8>) -> Bool {
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        // The length of the component being read, and how many of its bytes are dots.
        var length = 0
        var dots = 0
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if length == 0 || (length == dots && length <= 2) { return false }
                (length, dots) = (0, 0)
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && !(length == dots && length <= 2)
    }
}

extension Optional where Wrapped == String {
    var nonEmpty: String? {
        guard let self, !self.isEmpty else { return nil }
        return self
    }
}
