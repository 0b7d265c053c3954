#if canImport(Glibc)
import Glibc
#endif

/// systemd socket activation (sd_listen_fds(3)): started by `transferd.socket`, the daemon is
/// handed the listening control socket as descriptor 3, with `LISTEN_PID` (its own pid) and
/// `LISTEN_FDS=1`, and serves it instead of making its own. systemd keeps the socket file and
/// queues connections while the daemon is not running, so the first `transferctl` command
/// starts it. Thread: the main thread, before anything else runs.
public enum SocketActivation {
    /// The socket handed over: the descriptor now belongs to whoever takes it (one owner: the
    /// control server's listener closes it), and the path it is bound to, when it has one.
    public struct Socket: Equatable, Sendable {
        public let descriptor: Int32
        public let path: String?
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// `LISTEN_FDS` is not a number, or not 1.
        case descriptorCount(String)
        /// Descriptor 3 is not a listening Unix stream socket.
        case notAListeningUnixSocket(String)

        public var description: String {
            switch self {
            case .descriptorCount(let value):
                "systemd passed LISTEN_FDS=\(value); transferd takes exactly one socket (one ListenStream= in transferd.socket)"
            case .notAListeningUnixSocket(let what):
                "the descriptor systemd passed (3) is not a listening Unix stream socket: \(what) "
                    + "(transferd.socket needs ListenStream=PATH)"
            }
        }
    }

    /// SD_LISTEN_FDS_START.
    static let firstDescriptor: Int32 = 3

    /// Takes the socket systemd passed to this process: nil when none was (no `LISTEN_PID`, or
    /// another process's: the variables were inherited). `LISTEN_PID`, `LISTEN_FDS` and
    /// `LISTEN_FDNAMES` are unset either way, so that no child (a hook) inherits them. The
    /// descriptor is made close-on-exec.
    public static func take() throws(Failure) -> Socket? {
        let pid = environment("LISTEN_PID")
        let count = environment("LISTEN_FDS")
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        guard let pid, Int32(pid) == getpid(), let count else { return nil }
        guard count == "1" else { throw .descriptorCount(count) }
        let descriptor = firstDescriptor
        if let problem = problem(with: descriptor) { throw .notAListeningUnixSocket(problem) }
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
        return Socket(descriptor: descriptor, path: boundPath(descriptor))
    }

    /// Why `descriptor` is not a listening Unix stream socket, or nil when it is one.
    static func problem(with descriptor: Int32) -> String? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return "it is not open (\(SystemError.describe(errno)))" }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return "it is not a socket" }
        guard option(SO_DOMAIN, of: descriptor) == AF_UNIX else { return "it is not a Unix socket" }
        guard option(SO_TYPE, of: descriptor) == Int32(SOCK_STREAM.rawValue) else { return "it is not a stream socket" }
        guard option(SO_ACCEPTCONN, of: descriptor) == 1 else { return "it does not listen" }
        return nil
    }

    private static func option(_ name: Int32, of descriptor: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, name, &value, &length) == 0 else { return nil }
        return value
    }

    /// The file the socket is bound to (nil for an abstract or unnamed socket).
    private static func boundPath(_ descriptor: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        let bytes = withUnsafeBytes(of: address.sun_path) { Array($0.prefix { $0 != 0 }) }
        guard let first = bytes.first, first != 0 else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
