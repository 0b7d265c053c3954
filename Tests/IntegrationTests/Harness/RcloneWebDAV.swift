import Foundation

/// `rclone serve webdav` (Debian's rclone package): an RFC 4918 server that, unlike nginx with
/// `create_full_put_path`, refuses a PUT whose parent collection does not exist. It serves its
/// own directory (`root`) on 127.0.0.1 on a free port, with an empty config file and its own
/// cache directory, so it never reads or writes the user's; every request is logged (`-v`).
final class RcloneWebDAV {
    static let executable = "/usr/bin/rclone"

    let root: URL
    let logURL: URL
    /// `user:password` for HTTP basic auth, when the server requires it.
    let credentials: (user: String, password: String)?
    private let directory: URL
    private let tls: (cert: URL, key: URL)?
    private var process: ChildProcess?
    private(set) var port: UInt16 = 0

    init(directory: URL, credentials: (user: String, password: String)? = nil, tls: (cert: URL, key: URL)? = nil) throws {
        self.directory = directory
        self.credentials = credentials
        self.tls = tls
        root = directory.appendingPathComponent("root")
        logURL = directory.appendingPathComponent("rclone.log")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("cache"), withIntermediateDirectories: true)
        try Data().write(to: directory.appendingPathComponent("rclone.conf"))
    }

    deinit { stop() }

    /// Starts the server and waits until it accepts connections (retrying on a port race).
    func start() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw HarnessError("\(Self.executable) not found (Debian package rclone)")
        }
        var lastLog = ""
        for _ in 0..<5 {
            let port = try Sockets.freeTCPPort()
            var arguments = ["serve", "webdav", root.path, "--addr", "127.0.0.1:\(port)", "-v",
                             "--config", directory.appendingPathComponent("rclone.conf").path,
                             "--cache-dir", directory.appendingPathComponent("cache").path]
            if let credentials { arguments += ["--user", credentials.user, "--pass", credentials.password] }
            if let tls { arguments += ["--cert", tls.cert.path, "--key", tls.key.path] }
            let process = try ChildProcess(executable: URL(fileURLWithPath: Self.executable), arguments: arguments,
                                           stdoutURL: logURL, stderrURL: logURL, append: true)
            let up = poll(timeout: 10) { !process.isRunning || Sockets.acceptsConnections(port: port) }
            if up && process.isRunning {
                self.process = process
                self.port = port
                return
            }
            process.stop()
            lastLog = log()
        }
        throw HarnessError("rclone serve webdav did not start: \(lastLog.suffix(2000))")
    }

    func stop() {
        process?.stop()
        process = nil
    }

    /// `http(s)://127.0.0.1:PORT/<encodedPath>` (the caller percent-encodes).
    func url(_ encodedPath: String = "") -> String {
        "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)/\(encodedPath)"
    }

    /// `Authorization: Basic …` for the server's credentials.
    var authorizationHeader: String? {
        credentials.map { "Authorization: Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
    }

    /// Every regular file under `root`, by path relative to it (not encoded).
    func files() -> [String: URL] {
        var files: [String: URL] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [:] }
        while let relative = walker.nextObject() as? String {
            let url = root.appendingPathComponent(relative)
            if Files.isRegularFile(url) { files[relative] = url }
        }
        return files
    }

    /// The decoded paths of the requests with `method` the server has logged, in order, whatever
    /// their outcome (`INFO  : /a b/: MKCOL from 127.0.0.1:N`, or `ERROR : …: MKCOL from …: why`).
    func requests(_ method: String) -> [String] {
        log().split(separator: "\n").compactMap { line in
            guard let levelEnd = line.firstRange(of: " : "),
                  let methodStart = line[levelEnd.upperBound...].firstRange(of: ": \(method) from ") else { return nil }
            return String(line[levelEnd.upperBound..<methodStart.lowerBound])
        }
    }

    /// The log, with bytes that are not UTF-8 (names that are not) shown as U+FFFD.
    func log() -> String { (try? Data(contentsOf: logURL)).map { String(decoding: $0, as: UTF8.self) } ?? "" }
}
