import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request as recorded by the harness's access log format.
struct AccessLogEntry {
    let method: String
    let path: String
    let status: Int
    let bodyBytesSent: Int
    /// The request's `Range` header, nil when absent.
    let range: String?
    /// The request's `If-Range` header, nil when absent.
    let ifRange: String?
}

/// A real nginx on 127.0.0.1 with its own prefix, config, logs and docroot.
///
/// Locations (all serve the same docroot):
/// - `/files/`         plain static, nginx's own ETag / Last-Modified / Range support
/// - `/norange/`       `max_ranges 0` (every Range request gets a full 200)
/// - `/slow/`          `limit_rate <slowRate>`
/// - `/slow-norange/`  both of the above, so a no-Range transfer lasts long enough to pause
/// - `/status/404`, `/status/500`
/// - `/dav/`           WebDAV `PUT` into its own directory (`davRoot`), creating directories
/// - `/named/`, `/named-utf8/`, `/named-evil/`, `/named-slow/`  with a `Content-Disposition`
///                     filename: `report 2026.pdf`; `€ rates.txt` (RFC 8187, beside a plain
///                     fallback); `../../evil/.bashrc`; `report 2026.pdf` at `slowRate`
/// - `/gzip/`          gzip on for every type (a client that asks gets `Content-Encoding: gzip`)
/// - `/slow-gzip/`     both `/slow/` and `/gzip/`
/// - `/auth/`          `auth_basic` against `htpasswd` (empty until a test writes it)
/// - `/host`           answers the request's `Host` header and a line feed
/// - `/bearer/`        401 unless `Authorization: Bearer good`
final class NginxServer {
    enum Location: String {
        case files, norange, slow, gzip, auth
        case slowNoRange = "slow-norange"
        case named
        case namedUTF8 = "named-utf8"
        case namedEvil = "named-evil"
        case namedSlow = "named-slow"
        /// 401 unless `Authorization: Bearer good`.
        case bearer
        case slowGzip = "slow-gzip"
    }

    static let executable = "/usr/sbin/nginx"

    let prefix: URL
    let docroot: URL
    let accessLog: URL
    let errorLog: URL
    let slowRate: String
    /// Where `PUT /dav/REL/PATH` stores its body (as `davRoot/REL/PATH`).
    let davRoot: URL
    /// The users of `/auth/` (`user:{PLAIN}password` lines), read by nginx at each request.
    let htpasswd: URL
    private(set) var port: UInt16 = 0
    private var child: ChildProcess?

    init(directory: URL, slowRate: String = "512k") throws {
        prefix = directory
        docroot = directory.appendingPathComponent("docroot")
        accessLog = directory.appendingPathComponent("access.log")
        errorLog = directory.appendingPathComponent("error.log")
        self.slowRate = slowRate
        davRoot = directory.appendingPathComponent("dav")
        htpasswd = directory.appendingPathComponent("htpasswd")
        let fm = FileManager.default
        for dir in [docroot, davRoot, directory.appendingPathComponent("temp"), directory.appendingPathComponent("logs")] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        try Data().write(to: htpasswd)
    }

    /// Lets `user` in to `/auth/` with `password` (nginx's `{PLAIN}` scheme).
    func allow(user: String, password: String) throws {
        try "\(user):{PLAIN}\(password)\n".write(to: htpasswd, atomically: true, encoding: .utf8)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func url(_ location: Location, _ name: String) -> String { "\(baseURL)/\(location.rawValue)/\(name)" }

    func statusURL(_ status: Int) -> String { "\(baseURL)/status/\(status)" }

    /// Starts nginx on a free port and waits until it accepts connections. Retries on a
    /// port race (another process grabbing the port between probe and bind).
    func start() throws {
        child = try Self.launch(prefix: prefix, errorLog: errorLog, ports: 1, name: "nginx") { ports in
            port = ports[0]
            return config()
        }
    }

    /// Starts nginx with the configuration `config` writes for `count` distinct free ports,
    /// and waits until every port accepts connections. Retries on a port race (another process
    /// grabbing a port between probe and bind).
    static func launch(prefix: URL, errorLog: URL, ports count: Int, name: String,
                       config: ([UInt16]) -> String) throws -> ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw HarnessError("nginx not found at \(executable)")
        }
        var lastError = ""
        for _ in 0..<5 {
            let ports = try (0..<count).map { _ in try Sockets.freeTCPPort() }
            guard Set(ports).count == count else { continue }
            let confURL = prefix.appendingPathComponent("nginx.conf")
            try config(ports).write(to: confURL, atomically: true, encoding: .utf8)
            let output = prefix.appendingPathComponent("nginx.out")
            let process = try ChildProcess(
                executable: URL(fileURLWithPath: executable),
                arguments: ["-p", prefix.path + "/", "-c", confURL.path, "-e", errorLog.path],
                stdoutURL: output, stderrURL: output)
            let up = poll(timeout: 10) {
                !process.isRunning || ports.allSatisfy { Sockets.acceptsConnections(port: $0) }
            }
            if up && process.isRunning { return process }
            process.stop()
            lastError = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            lastError += (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        }
        throw HarnessError("\(name) did not start: \(lastError)")
    }

    /// SIGTERM (fast shutdown) and wait; SIGKILL as a last resort.
    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    private func config() -> String {
        let root = docroot.path + "/"
        return Self.configuration(prefix: prefix, errorLog: errorLog, accessLog: accessLog,
                                  logFormat: "'$request|$status|$body_bytes_sent|$http_range|$http_if_range'", servers: """
            server {
                listen 127.0.0.1:\(port);
                server_name localhost;
                location /files/ { alias \(root); }
                location /norange/ { alias \(root); max_ranges 0; }
                location /slow/ { alias \(root); limit_rate \(slowRate); }
                location /slow-norange/ { alias \(root); limit_rate \(slowRate); max_ranges 0; }
                location /bearer/ { alias \(root); if ($http_authorization != "Bearer good") { return 401; } }
                location /named/ { alias \(root); add_header Content-Disposition 'attachment; filename="report 2026.pdf"'; }
                location /named-utf8/ {
                    alias \(root);
                    add_header Content-Disposition "attachment; filename=\\"fallback.txt\\"; filename*=UTF-8''%E2%82%AC%20rates.txt";
                }
                location /named-evil/ { alias \(root); add_header Content-Disposition 'attachment; filename="../../evil/.bashrc"'; }
                location /named-slow/ {
                    alias \(root); limit_rate \(slowRate);
                    add_header Content-Disposition 'attachment; filename="report 2026.pdf"';
                }
                location /dav/ {
                    alias \(davRoot.path)/;
                    dav_methods PUT;
                    create_full_put_path on;
                    dav_access user:rw group:r all:r;
                    client_max_body_size 0;
                }
                location /gzip/ { alias \(root); gzip on; gzip_types *; gzip_min_length 0; }
                location /slow-gzip/ { alias \(root); gzip on; gzip_types *; limit_rate \(slowRate); }
                location /auth/ { alias \(root); auth_basic "transferd tests"; auth_basic_user_file \(htpasswd.path); }
                location = /host { default_type text/plain; return 200 "$http_host\\n"; }
                location = /status/404 { return 404; }
                location = /status/500 { return 500; }
            }
        """)
    }

    /// A whole nginx.conf for one foreground nginx of the harness (one process, its own pid,
    /// lock, logs and temp directories under `prefix`), with `servers` in its `http` block and
    /// the access log written in `logFormat`.
    static func configuration(prefix: URL, errorLog: URL, accessLog: URL, logFormat: String, servers: String) -> String {
        let temp = prefix.appendingPathComponent("temp").path
        return """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(prefix.path)/nginx.pid;
        lock_file \(prefix.path)/nginx.lock;
        error_log \(errorLog.path) info;
        events { worker_connections 256; }
        http {
            default_type application/octet-stream;
            log_format harness \(logFormat);
            access_log \(accessLog.path) harness;
            client_body_temp_path \(temp)/body;
            proxy_temp_path \(temp)/proxy;
            fastcgi_temp_path \(temp)/fastcgi;
            uwsgi_temp_path \(temp)/uwsgi;
            scgi_temp_path \(temp)/scgi;
            keepalive_timeout 30s;
        \(servers)
        }

        """
    }

    // MARK: docroot

    /// Creates (or overwrites) `name` in the docroot with `size` random bytes.
    @discardableResult
    func createFile(named name: String, size: Int) throws -> URL {
        let url = docroot.appendingPathComponent(name)
        try Files.randomData(count: size).write(to: url, options: .atomic)
        return url
    }

    /// Replaces `name` with `size` new random bytes through a new inode, and moves its
    /// mtime forward so nginx's ETag and Last-Modified are guaranteed to change.
    @discardableResult
    func replaceFile(named name: String, size: Int) throws -> URL {
        let url = docroot.appendingPathComponent(name)
        let fm = FileManager.default
        let oldDate = (try? fm.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date ?? Date()
        try Files.randomData(count: size).write(to: url, options: .atomic)
        let newDate = max(Date(), oldDate.addingTimeInterval(2)).addingTimeInterval(1)
        try fm.setAttributes([.modificationDate: newDate], ofItemAtPath: url.path)
        return url
    }

    func localPath(_ name: String) -> URL { docroot.appendingPathComponent(name) }

    // MARK: access log

    func accessLogEntries() -> [AccessLogEntry] {
        guard let text = try? String(contentsOf: accessLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { return nil }
            let request = fields[0].split(separator: " ").map(String.init)
            guard request.count >= 2 else { return nil }
            func header(_ value: String) -> String? { value == "-" || value.isEmpty ? nil : value }
            return AccessLogEntry(
                method: request[0], path: request[1],
                status: Int(fields[1]) ?? -1, bodyBytesSent: Int(fields[2]) ?? 0,
                range: header(fields[3]), ifRange: header(fields[4]))
        }
    }

    /// GET requests for one docroot file through one location, in log order.
    func gets(_ location: Location, _ name: String) -> [AccessLogEntry] {
        accessLogEntries().filter { $0.method == "GET" && $0.path == "/\(location.rawValue)/\(name)" }
    }

    /// Waits until the access log holds at least `count` GETs for the file (nginx logs an
    /// aborted request only once it notices the client went away).
    @discardableResult
    func awaitGets(_ location: Location, _ name: String, count: Int, timeout: TimeInterval = 5) -> [AccessLogEntry] {
        poll(timeout: timeout) { gets(location, name).count >= count }
        return gets(location, name)
    }

    func describeLog() -> String {
        (try? String(contentsOf: accessLog, encoding: .utf8)) ?? "(no access log)"
    }
}
