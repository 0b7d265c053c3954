#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// A blocking client of the control socket, for `transferctl` and other tools.
/// Thread: one at a time.
public final class ControlClient {
    public enum Failure: Error, Equatable, Sendable {
        /// Nothing listens at the socket (the daemon is not running, or another path was meant).
        case cannotConnect(path: String, reason: String)
        case timedOut
        case connectionClosed
        case invalidResponse(String)
        /// The socket, or the process listening on it, belongs to another user: nothing is sent
        /// (a request may carry secret headers).
        case untrusted(path: String, owner: UInt32)

        public var message: String {
            switch self {
            case .cannotConnect(let path, let reason):
                "cannot reach transferd at \(path): \(reason) (is the daemon running? start it with 'transferd')"
            case .timedOut: "timed out waiting for transferd"
            case .connectionClosed: "transferd closed the connection"
            case .invalidResponse(let detail): "transferd sent an invalid response: \(detail)"
            case .untrusted(let path, let owner):
                "refusing to talk to \(path): it belongs to uid \(owner), not to you (uid \(geteuid())) or root " +
                    "(another user's socket? check --socket / $TRANSFERD_SOCKET)"
            }
        }
    }

    private let descriptor: Int32
    private var framer = LineFramer(limit: 256 << 20)
    /// Lines already received but not yet returned (one read may bring several).
    private var lines: [[UInt8]] = []

    /// Connects, after checking that the socket and the process behind it are this user's or
    /// root's: a request is never sent to a socket someone else put there.
    public init(socketPath: String) throws(Failure) {
        var info = stat()
        if lstat(socketPath, &info) == 0, !Self.isTrusted(UInt32(info.st_uid)) {
            throw .untrusted(path: socketPath, owner: UInt32(info.st_uid))
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannotConnect(path: socketPath, reason: SystemError.describe(errno)) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socketPath.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else {
            close(fd)
            throw .cannotConnect(path: socketPath, reason: "socket path longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let reason = SystemError.describe(errno)
            close(fd)
            throw .cannotConnect(path: socketPath, reason: reason)
        }
        if let peer = FileSystem.peerUID(fd), !Self.isTrusted(peer) {
            close(fd)
            throw .untrusted(path: socketPath, owner: peer)
        }
        descriptor = fd
    }

    private static func isTrusted(_ uid: UInt32) -> Bool { uid == geteuid() || uid == 0 }

    deinit { close(descriptor) }

    /// Sends one request and reads one response; `timeout` in seconds, nil waits forever.
    public func send(_ request: ControlRequest, timeout: Double? = nil) throws(Failure) -> ControlResponse {
        guard let bytes = try? JSONStreamEncoder().encode(request) else { throw .invalidResponse("cannot encode request") }
        return try send(encoded: bytes, timeout: timeout)
    }

    /// Sends a request already encoded as JSON (without its newline), for a client that had to
    /// encode it anyway (to check its size), and reads the answer.
    public func send(encoded request: [UInt8], timeout: Double? = nil) throws(Failure) -> ControlResponse {
        do {
            try post(encoded: request)
            return try receive(timeout: timeout)
        } catch .connectionClosed {
            // The daemon may have answered and closed before reading the request (a refused
            // uid): what it said is still waiting to be read.
            return try receive(timeout: 1)
        }
    }

    /// Sends a request already encoded as JSON (without its newline) without reading its
    /// answer (`receive` does): `batch submit` reads its next chunk while the daemon reads this one.
    public func post(encoded request: [UInt8]) throws(Failure) {
        var bytes = request
        bytes.append(UInt8(ascii: "\n"))
        try writeAll(bytes)
    }

    /// Sends a request without reading its answer, for a client that waits on several
    /// connections at once (`firstReadable`, then `receive`): `wait --progress` follows the
    /// event stream on one while its `wait` is pending on another.
    public func post(_ request: ControlRequest) throws(Failure) {
        guard let bytes = try? JSONStreamEncoder().encode(request) else { throw .invalidResponse("cannot encode request") }
        try post(encoded: bytes)
    }

    /// The index of the first of `clients` with a response to read (one already received, or
    /// bytes or the end of the connection waiting), waiting at most `timeout` seconds (nil:
    /// forever); nil when none has one in time.
    public static func firstReadable(_ clients: [ControlClient], timeout: Double?) -> Int? {
        if let ready = clients.firstIndex(where: { !$0.lines.isEmpty }) { return ready }
        let deadline = timeout.map { Monotonic.now + $0 }
        var pollers = clients.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        while true {
            let milliseconds = deadline.map { Int32(max(0, min(($0 - Monotonic.now) * 1000 + 1, Double(Int32.max)))) } ?? -1
            let ready = poll(&pollers, nfds_t(pollers.count), milliseconds)
            if ready < 0, errno == EINTR { continue }
            if ready > 0 { return pollers.firstIndex { $0.revents != 0 } }
            if let deadline, Monotonic.now >= deadline { return nil }
            if ready < 0 { return nil }
        }
    }

    /// Reads the next response line: for requests the daemon answers with a stream (`events`
    /// with `follow`).
    public func receive(timeout: Double? = nil) throws(Failure) -> ControlResponse {
        let line = try readLine(timeout: timeout)
        do {
            return try JSONTreeDecoder().decode(ControlResponse.self, from: line)
        } catch {
            throw .invalidResponse("\(error)")
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .connectionClosed }
            offset += count
        }
    }

    private func readLine(timeout: Double?) throws(Failure) -> [UInt8] {
        if !lines.isEmpty { return lines.removeFirst() }
        let deadline = timeout.map { Monotonic.now + $0 }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if let deadline {
                let remaining = deadline - Monotonic.now
                guard remaining > 0 else { throw .timedOut }
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(min(remaining * 1000 + 1, Double(Int32.max))))
                if ready < 0, errno == EINTR { continue }
                if ready == 0 { continue }
            }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .connectionClosed }
            let outputs = buffer.withUnsafeBytes { framer.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            for output in outputs {
                switch output {
                case .line(let line): lines.append(line)
                case .tooLong: throw .invalidResponse("response too large")
                }
            }
            if !lines.isEmpty { return lines.removeFirst() }
        }
    }
}
