import Foundation

/// The network-options server: `net_server.py` (next to this file) run by /usr/bin/python3,
/// standard library only. It serves the files of its directory at `/files/`, behind Basic at
/// `/basic/` and Digest at `/digest/` (also PUT), redirects at `/redirect?to=`, forwards
/// requests in absolute form as an HTTP proxy, and logs every request with its headers (`/log`).
final class NetServer {
    static let script = PythonServer.script("net_server.py")

    /// The files it serves (and `uploads/`, where PUTs go).
    let directory: URL
    let outputURL: URL
    let user: String
    let password: String
    /// `127.0.0.1`, or `::1` for a server on the IPv6 loopback only.
    let bind: String
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?
    private let runner: CommandRunner

    init(directory: URL, outputURL: URL, scratch: URL, bind: String = "127.0.0.1", user: String = "alice",
         password: String = "") throws {
        self.directory = directory
        self.outputURL = outputURL
        self.bind = bind
        self.user = user
        self.password = password
        runner = try CommandRunner(scratch: scratch)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// `http://127.0.0.1:PORT` (or `http://[::1]:PORT`).
    var baseURL: String { bind.contains(":") ? "http://[\(bind)]:\(port)" : "http://\(bind):\(port)" }

    func url(_ area: String, _ name: String) -> String { "\(baseURL)/\(area)/\(name)" }

    func redirectURL(to target: String) -> String {
        "\(baseURL)/redirect?to=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target)"
    }

    /// Writes `name` with `size` random bytes; returns its sha256.
    @discardableResult
    func createFile(named name: String, size: Int) throws -> String {
        let file = directory.appendingPathComponent(name)
        try Files.randomData(count: size).write(to: file)
        return try Files.sha256(of: file, using: runner)
    }

    func start() throws {
        let ipv6 = bind.contains(":")
        (child, port) = try PythonServer.launch(
            Self.script, arguments: ["--dir", directory.path, "--bind", bind, "--user", user, "--password", password],
            output: outputURL, what: "net server",
            accepts: { ipv6 ? Sockets.acceptsIPv6Connections(port: $0) : Sockets.acceptsConnections(port: $0) })
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    /// Every request so far (`method, target, path, headers, status, proxied?, location?`).
    func log() throws -> [[String: Any]] {
        let result = runner.run(FaultServer.curl, ["-sf", "--max-time", "10", "-g", baseURL + "/log"], timeout: 15)
        guard result.exitCode == 0, let data = result.stdout.data(using: .utf8),
              let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { throw HarnessError("net server /log: \(result.summary)") }
        return list
    }

    /// The requests it forwarded as a proxy, by their absolute target.
    func proxied() throws -> [String] {
        try log().filter { $0["proxied"] as? Bool == true }.compactMap { $0["target"] as? String }
    }

    /// The headers of each request for `path`, by lower-cased name, in order.
    func requestHeaders(_ path: String) throws -> [[String: String]] {
        try log().filter { $0["path"] as? String == path && $0["proxied"] == nil }.map { entry in
            let headers = entry["headers"] as? [String: String] ?? [:]
            return Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        }
    }

    func describeLog() -> String {
        let entries = ((try? log()) ?? []).map { entry in
            ["method", "target", "status", "proxied", "location"].compactMap { key in entry[key].map { "\(key)=\($0)" } }
                .joined(separator: " ") + " authorization=\((entry["headers"] as? [String: String])?["Authorization"] ?? "-")"
        }
        let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return (entries.isEmpty ? "(no requests)" : entries.joined(separator: "\n"))
            + "\n-- net server output (tail):\n" + output.split(separator: "\n").suffix(20).joined(separator: "\n")
    }
}

/// A port on 127.0.0.1 that never answers a connection: a listening socket with a backlog of 0
/// whose accept queue is filled by connections nobody accepts, so the kernel drops every new
/// SYN and a client's connect hangs until its own timeout (no root, no iptables).
final class Blackhole {
    let port: UInt16
    private var descriptors: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw HarnessError("socket(): errno \(errno)") }
        descriptors.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 0) == 0
                && getsockname(listener, $0, &length) == 0 }
        }
        guard bound else { throw HarnessError("cannot listen on 127.0.0.1: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        // Connections that fill the queue, left pending (non-blocking connects).
        for _ in 0..<8 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard client >= 0 else { throw HarnessError("socket(): errno \(errno)") }
            descriptors.append(client)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    deinit { for descriptor in descriptors { close(descriptor) } }
}
