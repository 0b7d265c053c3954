import Foundation

/// Throw-away PKI made with /usr/bin/openssl in a test's temp directory:
/// - `ca.pem` / `ca.key`: the CA that signs the server certificate
/// - `server.pem` / `server.key`: subjectAltName `IP:127.0.0.1,DNS:localhost`, signed by `ca.pem`
/// - `other-ca.pem`: an unrelated CA (must be rejected when trusted instead of `ca.pem`)
/// - `client-ca.pem`: the CA nginx trusts for client certificates
/// - `client.pem` / `client.key`: a client certificate signed by `client-ca.pem`
/// - `serverPin`: `sha256//BASE64` of the server key (curl's CURLOPT_PINNEDPUBLICKEY form)
/// All keys are unencrypted EC P-256 (fast to generate).
final class TLSFixture {
    static let openssl = "/usr/bin/openssl"

    let directory: URL
    let caCert: URL
    let caKey: URL
    let serverCert: URL
    let serverKey: URL
    let otherCACert: URL
    let clientCACert: URL
    let clientCert: URL
    let clientKey: URL
    private(set) var serverPin = ""

    private let runner: CommandRunner

    init(directory: URL) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.openssl) else {
            throw HarnessError("openssl not found at \(Self.openssl)")
        }
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        runner = try CommandRunner(scratch: directory.appendingPathComponent("scratch"))
        func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
        caCert = file("ca.pem")
        caKey = file("ca.key")
        serverCert = file("server.pem")
        serverKey = file("server.key")
        otherCACert = file("other-ca.pem")
        clientCACert = file("client-ca.pem")
        clientCert = file("client.pem")
        clientKey = file("client.key")
        try generate()
    }

    private var config: URL { directory.appendingPathComponent("openssl.cnf") }

    private func generate() throws {
        try """
        [req]
        distinguished_name = dn
        prompt = no
        [dn]
        CN = placeholder
        [v3_ca]
        basicConstraints = critical,CA:TRUE
        keyUsage = critical,keyCertSign,cRLSign
        subjectKeyIdentifier = hash
        [server]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature,keyEncipherment
        extendedKeyUsage = serverAuth
        subjectAltName = IP:127.0.0.1,DNS:localhost
        [client]
        basicConstraints = critical,CA:FALSE
        keyUsage = critical,digitalSignature,keyEncipherment
        extendedKeyUsage = clientAuth

        """.write(to: config, atomically: true, encoding: .utf8)

        try makeCA(cert: caCert, key: caKey, subject: "/CN=transferd test CA")
        try makeCA(cert: otherCACert, key: directory.appendingPathComponent("other-ca.key"),
                   subject: "/CN=transferd unrelated CA")
        let clientCAKey = directory.appendingPathComponent("client-ca.key")
        try makeCA(cert: clientCACert, key: clientCAKey, subject: "/CN=transferd client CA")
        try makeLeaf(cert: serverCert, key: serverKey, subject: "/CN=localhost", extensions: "server",
                     caCert: caCert, caKey: caKey)
        try makeLeaf(cert: clientCert, key: clientKey, subject: "/CN=transferd test client", extensions: "client",
                     caCert: clientCACert, caKey: clientCAKey)

        let pipeline = "\(Self.openssl) x509 -in '\(serverCert.path)' -pubkey -noout"
            + " | \(Self.openssl) pkey -pubin -outform der"
            + " | \(Self.openssl) dgst -sha256 -binary | base64"
        let pin = runner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", pipeline],
                             timeout: 30)
        let base64 = pin.trimmedStdout
        guard pin.exitCode == 0, base64.count == 44, base64.hasSuffix("=") else {
            throw HarnessError("computing the server key pin failed: \(pin.summary)")
        }
        serverPin = "sha256//" + base64
    }

    private func openssl(_ arguments: [String]) throws {
        let result = runner.run(URL(fileURLWithPath: Self.openssl), arguments, timeout: 30)
        guard result.exitCode == 0 else { throw HarnessError("openssl failed: \(result.summary)") }
    }

    private var newKeyArguments: [String] {
        ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-noenc"]
    }

    private func makeCA(cert: URL, key: URL, subject: String) throws {
        try openssl(["req", "-x509", "-new", "-config", config.path, "-extensions", "v3_ca"] + newKeyArguments
            + ["-keyout", key.path, "-out", cert.path, "-days", "2", "-sha256", "-subj", subject])
    }

    private func makeLeaf(cert: URL, key: URL, subject: String, extensions: String, caCert: URL, caKey: URL) throws {
        let csr = cert.deletingPathExtension().appendingPathExtension("csr")
        try openssl(["req", "-new", "-config", config.path] + newKeyArguments
            + ["-keyout", key.path, "-out", csr.path, "-subj", subject])
        let serial = "0x" + String(UInt64.random(in: 1...UInt64(Int64.max)), radix: 16)
        try openssl(["x509", "-req", "-in", csr.path, "-CA", caCert.path, "-CAkey", caKey.path,
                     "-set_serial", serial, "-days", "2", "-sha256",
                     "-extfile", config.path, "-extensions", extensions, "-out", cert.path])
    }
}

/// One request as recorded by `TLSNginxServer`'s access log.
struct TLSAccessLogEntry {
    /// The port the request arrived on (tells the plain, TLS and client-cert servers apart).
    let port: UInt16
    let method: String
    let path: String
    let status: Int
    /// Request headers as received ("" when absent).
    let authorization: String
    let cookie: String
    let proxyAuthorization: String
    let xPublic: String
    /// The verified client certificate's subject ("" without one).
    let clientSubject: String
}

/// A second nginx (its own prefix, config and logs) serving an existing docroot on three
/// free ports on 127.0.0.1, so TLS tests leave the plain harness nginx untouched:
/// - `plainPort` (HTTP): `/files/`, `/slow/`, `/sink/` (any method, answers 201 and
///   discards the body)
/// - `tlsPort` (HTTPS with the fixture's server certificate): `/files/`, `/slow/`,
///   `/sink/`, and `/to-http/NAME` → `302 http://127.0.0.1:<plainPort>/files/NAME`
/// - `mtlsPort` (HTTPS, `ssl_verify_client on` against the fixture's client CA): `/files/`
/// The access log records the port and the secret-bearing request headers, so a test can
/// prove that a redacted header was still sent.
final class TLSNginxServer {
    enum Scheme { case plain, tls, mtls }

    let prefix: URL
    let docroot: URL
    let tls: TLSFixture
    let accessLog: URL
    let errorLog: URL
    let slowRate: String
    private(set) var plainPort: UInt16 = 0
    private(set) var tlsPort: UInt16 = 0
    private(set) var mtlsPort: UInt16 = 0
    private var child: ChildProcess?

    init(directory: URL, docroot: URL, tls: TLSFixture, slowRate: String = "256k") throws {
        prefix = directory
        self.docroot = docroot
        self.tls = tls
        self.slowRate = slowRate
        accessLog = directory.appendingPathComponent("access.log")
        errorLog = directory.appendingPathComponent("error.log")
        let fm = FileManager.default
        for dir in [directory, directory.appendingPathComponent("temp"), directory.appendingPathComponent("logs")] {
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        }
    }

    func port(_ scheme: Scheme) -> UInt16 {
        switch scheme {
        case .plain: return plainPort
        case .tls: return tlsPort
        case .mtls: return mtlsPort
        }
    }

    func baseURL(_ scheme: Scheme) -> String {
        "\(scheme == .plain ? "http" : "https")://127.0.0.1:\(port(scheme))"
    }

    /// `/files/NAME` on one of the servers.
    func url(_ scheme: Scheme, _ name: String) -> String { "\(baseURL(scheme))/files/\(name)" }

    /// `/slow/NAME` (rate-limited to `slowRate`) on the plain or TLS server.
    func slowURL(_ scheme: Scheme, _ name: String) -> String { "\(baseURL(scheme))/slow/\(name)" }

    /// `/sink/NAME`: accepts any upload with 201.
    func sinkURL(_ scheme: Scheme, _ name: String) -> String { "\(baseURL(scheme))/sink/\(name)" }

    /// A URL on 127.0.0.1 that redirects to the same server under another host name,
    /// `http://localhost:<plainPort>/files/NAME`.
    func redirectToOtherHostURL(_ name: String) -> String { "\(baseURL(.plain))/to-localhost/\(name)" }

    /// HTTPS URL that redirects to `http://127.0.0.1:<plainPort>/files/NAME`.
    func redirectToPlainURL(_ name: String) -> String { "\(baseURL(.tls))/to-http/\(name)" }

    func start() throws {
        child = try NginxServer.launch(prefix: prefix, errorLog: errorLog, ports: 3, name: "TLS nginx") { ports in
            (plainPort, tlsPort, mtlsPort) = (ports[0], ports[1], ports[2])
            return config()
        }
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    private func config() -> String {
        let root = docroot.path + "/"
        let common = """
                location /files/ { alias \(root); }
                location /slow/ { alias \(root); limit_rate \(slowRate); }
                location /sink/ { client_max_body_size 0; return 201 "stored\\n"; }
                location ~ ^/to-localhost/(.*)$ { return 302 http://localhost:\(plainPort)/files/$1; }
        """
        let logFormat = "'$server_port|$request|$status|$http_authorization|$http_cookie|'\n"
            + "                            '$http_proxy_authorization|$http_x_public|$ssl_client_s_dn'"
        return NginxServer.configuration(prefix: prefix, errorLog: errorLog, accessLog: accessLog, logFormat: logFormat,
                                         servers: """
            server {
                listen 127.0.0.1:\(plainPort);
                server_name localhost;
        \(common)
            }
            server {
                listen 127.0.0.1:\(tlsPort) ssl;
                server_name localhost;
                ssl_certificate \(tls.serverCert.path);
                ssl_certificate_key \(tls.serverKey.path);
        \(common)
                location ~ ^/to-http/(.*)$ { return 302 http://127.0.0.1:\(plainPort)/files/$1; }
            }
            server {
                listen 127.0.0.1:\(mtlsPort) ssl;
                server_name localhost;
                ssl_certificate \(tls.serverCert.path);
                ssl_certificate_key \(tls.serverKey.path);
                ssl_client_certificate \(tls.clientCACert.path);
                ssl_verify_client on;
                location /files/ { alias \(root); }
            }
        """)
    }

    // MARK: access log

    func accessLogEntries() -> [TLSAccessLogEntry] {
        guard let text = try? String(contentsOf: accessLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 8 else { return nil }
            let request = fields[1].split(separator: " ").map(String.init)
            guard request.count >= 2 else { return nil }
            func value(_ field: String) -> String { field == "-" ? "" : field }
            return TLSAccessLogEntry(
                port: UInt16(fields[0]) ?? 0, method: request[0], path: request[1],
                status: Int(fields[2]) ?? -1,
                authorization: value(fields[3]), cookie: value(fields[4]),
                proxyAuthorization: value(fields[5]), xPublic: value(fields[6]),
                clientSubject: value(fields[7]))
        }
    }

    /// Requests that arrived on one server for `path`.
    func requests(_ scheme: Scheme, path: String) -> [TLSAccessLogEntry] {
        accessLogEntries().filter { $0.port == port(scheme) && $0.path == path }
    }

    /// Waits until at least `count` requests for `path` arrived on one server.
    @discardableResult
    func awaitRequests(_ scheme: Scheme, path: String, count: Int, timeout: TimeInterval = 5) -> [TLSAccessLogEntry] {
        poll(timeout: timeout) { requests(scheme, path: path).count >= count }
        return requests(scheme, path: path)
    }

    func describeLog() -> String {
        let access = (try? String(contentsOf: accessLog, encoding: .utf8)) ?? "(no access log)"
        let errors = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
        let tail = errors.split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n")
        return "\(access)\n-- TLS nginx error log (tail):\n\(tail)"
    }
}
