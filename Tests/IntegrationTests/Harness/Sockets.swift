import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if os(Linux)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let streamSocket = SOCK_STREAM
private let sendFlags: Int32 = 0
#endif

/// Small POSIX socket helpers: free ports, reachability, and a raw Unix-socket client
/// for feeding garbage to the control socket.
enum Sockets {
    private static func loopback(port: UInt16) -> sockaddr_in {
        var addr = sockaddr_in()
        #if !os(Linux)
        addr.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return addr
    }

    /// Asks the kernel for a free TCP port on 127.0.0.1 by binding port 0.
    static func freeTCPPort() throws -> UInt16 {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw HarnessError("socket(): errno \(errno)") }
        defer { close(fd) }
        var addr = loopback(port: 0)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw HarnessError("bind(127.0.0.1:0): errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw HarnessError("getsockname(): errno \(errno)") }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// True when something accepts TCP connections on [::1]:port.
    static func acceptsIPv6Connections(port: UInt16) -> Bool {
        let fd = socket(AF_INET6, streamSocket, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in6()
        addr.sin6_family = sa_family_t(AF_INET6)
        addr.sin6_port = port.bigEndian
        addr.sin6_addr = in6addr_loopback
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        return result == 0
    }

    /// Whether this machine has an IPv6 loopback to listen on.
    static var hasIPv6Loopback: Bool {
        let fd = socket(AF_INET6, streamSocket, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in6()
        addr.sin6_family = sa_family_t(AF_INET6)
        addr.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }

    /// True when something accepts TCP connections on 127.0.0.1:port.
    static func acceptsConnections(port: UInt16) -> Bool {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = loopback(port: port)
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }
}

/// A raw client connection to a Unix stream socket, with send/receive timeouts and no SIGPIPE.
final class UnixSocketConnection {
    enum Reply: Equatable {
        /// The peer sent at least one complete line.
        case line(String)
        /// The peer closed (or reset) the connection without a complete line.
        case closed
        /// Nothing happened before the timeout.
        case timedOut
    }

    private var fd: Int32

    init(path: String, timeout: TimeInterval) throws {
        fd = socket(AF_UNIX, streamSocket, 0)
        guard fd >= 0 else { throw HarnessError("socket(AF_UNIX): errno \(errno)") }
        #if !os(Linux)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))

        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count < capacity else {
            close(fd)
            throw HarnessError("socket path too long (\(pathBytes.count) bytes): \(path)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let err = errno
            close(fd)
            throw HarnessError("connect(\(path)): errno \(err)")
        }
    }

    deinit { closeConnection() }

    func closeConnection() {
        if fd >= 0 { close(fd); fd = -1 }
    }

    /// Sends everything it can. Returns the number of bytes written; stops early (without
    /// raising SIGPIPE) if the peer closes or stops reading until the send timeout.
    @discardableResult
    func send(_ data: Data) -> Int {
        var written = 0
        data.withUnsafeBytes { raw in
            while written < raw.count {
                let n = posixSend(fd, raw.baseAddress! + written, raw.count - written, sendFlags)
                if n > 0 { written += n; continue }
                if n < 0 && errno == EINTR { continue }
                return
            }
        }
        return written
    }

    /// The bytes that arrive next (at most `limit`), waiting through receive timeouts for up to
    /// `seconds` in all (0: one receive timeout): empty after a close, or when nothing came for
    /// that long.
    func receive(limit: Int = 64 * 1024, waitingUpTo seconds: TimeInterval = 0) -> [UInt8] {
        let deadline = Date().addingTimeInterval(seconds)
        var chunk = [UInt8](repeating: 0, count: limit)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { return Array(chunk[0..<n]) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && Date() < deadline { continue }
            return []
        }
    }

    /// Waits for one complete line, a close, or the receive timeout.
    func readReply(limit: Int = 1 << 20) -> Reply {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while buffer.count < limit {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                if let newline = buffer.firstIndex(of: 0x0A) {
                    return .line(String(decoding: buffer[..<newline], as: UTF8.self))
                }
                continue
            }
            if n == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .timedOut
            default: return .closed  // ECONNRESET and friends
            }
        }
        return .line(String(decoding: buffer, as: UTF8.self))
    }
}

/// `send(2)` under a name that does not clash with `UnixSocketConnection.send`.
private func posixSend(_ fd: Int32, _ buf: UnsafeRawPointer, _ len: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    return Glibc.send(fd, buf, len, flags)
    #else
    return Darwin.send(fd, buf, len, flags)
    #endif
}
