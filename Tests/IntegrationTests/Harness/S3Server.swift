import Foundation

/// The S3 operations `s3_server.py` counts (path-style requests, told apart by method, path and
/// query: `PUT ?partNumber&uploadId` is UploadPart, `PUT` of a key without them PutObject, …).
enum S3Operation: String, CaseIterable, Sendable {
    case createMultipartUpload = "CreateMultipartUpload"
    case uploadPart = "UploadPart"
    case completeMultipartUpload = "CompleteMultipartUpload"
    case abortMultipartUpload = "AbortMultipartUpload"
    case listParts = "ListParts"
    case listMultipartUploads = "ListMultipartUploads"
    case putObject = "PutObject"
    case getObject = "GetObject"
    case headObject = "HeadObject"
    case deleteObject = "DeleteObject"
    case createBucket = "CreateBucket"
    case headBucket = "HeadBucket"
    case listObjects = "ListObjects"
    case deleteBucket = "DeleteBucket"
    case other = "Other"
}

/// What an S3 server received since start (or `resetStats()`), per operation: counted by moto
/// itself (s3_server.py) or by the relay in front of another server (s3_relay.py).
struct S3Stats: Sendable {
    struct Counts: Sendable, Equatable {
        /// Requests that reached moto.
        var requests = 0
        /// Request body bytes moto read from the connection (what arrived, for a body cut short).
        var bytes: Int64 = 0
        /// Answers with status >= 400, and requests moto raised on (werkzeug answered 500).
        var errors = 0
    }

    let operations: [S3Operation: Counts]

    init(operations: [S3Operation: Counts]) { self.operations = operations }

    /// From a harness's `{"OP": {"requests", "bytes", "errors"}}` (s3_server.py, s3_relay.py).
    init(json operations: [String: [String: Any]]) {
        var counts: [S3Operation: Counts] = [:]
        for (name, entry) in operations {
            let operation = S3Operation(rawValue: name) ?? .other
            var current = counts[operation] ?? Counts()
            current.requests += jsonInt(entry["requests"]) ?? 0
            current.bytes += Int64(jsonInt(entry["bytes"]) ?? 0)
            current.errors += jsonInt(entry["errors"]) ?? 0
            counts[operation] = current
        }
        self.operations = counts
    }

    subscript(_ operation: S3Operation) -> Counts { operations[operation] ?? Counts() }
    func requests(_ operation: S3Operation) -> Int { self[operation].requests }
    func bytes(_ operation: S3Operation) -> Int64 { self[operation].bytes }
    func errors(_ operation: S3Operation) -> Int { self[operation].errors }
    /// Body bytes of every UploadPart request.
    var uploadPartBytes: Int64 { bytes(.uploadPart) }
    /// Body bytes of every PutObject request.
    var putObjectBytes: Int64 { bytes(.putObject) }
}

/// A real S3 server for the tests: moto (`moto[server]` from PyPI, in the test venv) run by
/// `s3_server.py` next to this file, on 127.0.0.1, in its own working directory, with SigV4
/// signature checking ON. At start it makes (while moto's auth is still off) an IAM user with an
/// `s3:*` policy, an access key (`accessKey`/`secretKey`) and the bucket `bucket`, then turns
/// auth on for every later request (moto's `POST /moto-api/reset-auth 0`): a wrong secret gets
/// 403 `SignatureDoesNotMatch`, an unknown key 403 `InvalidAccessKeyId`, a PUT without
/// `Authorization` 500 (moto's KeyError), a GET without it 403.
///
/// Clients use `endpoint` (path style: `endpoint/bucket/key`), which is a TCP relay in front of
/// moto: `cut()` closes it and every connection through it (new connections are refused) and
/// `restore()` listens again on the same port, while moto keeps its state (it is in memory, so
/// moto itself never restarts). `stats()` asks moto's own port.
///
/// What moto does (5.2.5), measured with curl 7.88's `--aws-sigv4` (CURLOPT_AWS_SIGV4):
/// - a signed request must carry `x-amz-content-sha256` (`UNSIGNED-PAYLOAD` for a streamed body,
///   the SHA-256 of the empty string for none), else 403 SignatureDoesNotMatch;
/// - a query parameter without a value must be written `?uploads=`: curl signs `?uploads` with
///   a canonical query of `uploads` where moto (botocore) computes `uploads=`, so a bare
///   `?uploads` gets 403 SignatureDoesNotMatch;
/// - part ETags are the quoted MD5 hex of the part; the object's ETag after
///   CompleteMultipartUpload is `"<md5 of the parts' md5s>-<number of parts>"`; parts other than
///   the last must be at least 5 MiB (EntityTooSmall at Complete);
/// - every answer carries `Connection: close` (werkzeug's server): no connection is reused.
final class S3Server: S3Serving {
    static let script = PythonServer.script("s3_server.py")
    static let clientScript = PythonServer.script("s3_client.py")

    let directory: URL
    let region: String
    let bucket: String
    /// moto's (and the launcher's) stdout and stderr: werkzeug's access lines, tracebacks.
    let logURL: URL
    /// `http://127.0.0.1:<relay port>`: what clients (transferd, boto3) use.
    private(set) var endpoint = ""
    /// The relay's port (the one in `endpoint`).
    private(set) var port: UInt16 = 0
    /// moto's own port, behind the relay (stats and relay control go there).
    private(set) var motoPort: UInt16 = 0
    private(set) var accessKey = ""
    private(set) var secretKey = ""
    private var child: ChildProcess?
    private let runner: CommandRunner
    /// The python of the venv moto is installed in: the test venv's unless given (an older moto's venv).
    private let python: URL?

    init(directory: URL, bucket: String = "test-bucket", region: String = "us-east-1", python: URL? = nil) throws {
        self.directory = directory
        self.bucket = bucket
        self.region = region
        self.python = python
        logURL = directory.appendingPathComponent("s3_server.log")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        runner = try CommandRunner(scratch: directory.appendingPathComponent("commands"))
    }

    deinit { stop() }

    /// The credentials for a daemon's environment (and nothing else): `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`.
    /// Writes `<home>/.aws/credentials` with the key as the `[default]` profile (for a daemon
    /// started with `HOME=<home>` and no `AWS_*` variables); returns its URL.
    @discardableResult
    func writeCredentialsFile(home: URL) throws -> URL {
        let aws = home.appendingPathComponent(".aws")
        try FileManager.default.createDirectory(at: aws, withIntermediateDirectories: true)
        let file = aws.appendingPathComponent("credentials")
        try Data("[default]\naws_access_key_id = \(accessKey)\naws_secret_access_key = \(secretKey)\n".utf8)
            .write(to: file)
        return file
    }

    /// Starts moto and the relay, makes the IAM user, key, policy and bucket, and waits (30 s)
    /// until `ready.json` says so.
    func start() throws {
        guard child == nil else { throw HarnessError("S3Server already started") }
        let python = try self.python ?? TestVenv.python()
        let ready = directory.appendingPathComponent("ready.json")
        try? FileManager.default.removeItem(at: ready)
        var info: [String: Any] = [:]
        (child, motoPort) = try PythonServer.launch(
            Self.script, arguments: ["--dir", directory.path, "--bucket", bucket, "--region", region],
            output: logURL, what: "moto (s3_server.py)", python: python.path, timeout: 30,
            hopeless: { $0.contains("No module named") },
            accepts: { port in
                guard let data = try? Data(contentsOf: ready),
                      let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                      jsonInt(object["port"]) == Int(port) else { return false }
                info = object
                return true
            })
        guard let relay = jsonInt(info["relayPort"]), let key = info["accessKey"] as? String,
              let secret = info["secretKey"] as? String, let endpoint = info["endpoint"] as? String
        else { throw HarnessError("s3_server.py: incomplete ready.json: \(info)") }
        port = UInt16(relay)
        accessKey = key
        secretKey = secret
        self.endpoint = endpoint
    }

    func stop() {
        child?.stop(grace: 5)
        child = nil
    }

    /// `endpoint/bucket/key` (the key as given: the caller percent-encodes).
    func url(_ key: String) -> String { "\(endpoint)/\(bucket)/\(key)" }

    // MARK: boto3

    /// boto3 against `endpoint` with this server's key, run by the venv moto runs from.
    var boto: S3BotoClient {
        get throws {
            S3BotoClient(endpoint: endpoint, bucket: bucket, environment: environment,
                         python: try python ?? TestVenv.python(), runner: runner)
        }
    }

    /// The object's SHA-256 and size as boto3 reads it back (GetObject), nil when there is none.
    func objectSHA256(_ key: String) throws -> (sha256: String, size: Int64)? { try boto.objectSHA256(key) }

    /// HeadObject's `ContentLength`, `ETag`, `ContentType`, `Metadata`; nil when there is none.
    func head(_ key: String) throws -> [String: Any]? { try boto.head(key) }

    func download(_ key: String, to destination: URL) throws { try boto.download(key, to: destination) }

    /// PutObject of the file's bytes (e.g. a source for download tests).
    func put(_ key: String, from source: URL) throws { try boto.put(key, from: source) }

    func createBucket(_ name: String) throws { try boto.createBucket(name) }

    /// The bucket's multipart uploads in progress (ListMultipartUploads).
    func multipartUploads() throws -> [(key: String, uploadID: String)] { try boto.multipartUploads() }

    /// The parts moto holds for an upload (ListParts); `etag` quoted, as S3 sends it.
    func parts(key: String, uploadID: String) throws -> [(number: Int, size: Int64, etag: String)] {
        try boto.parts(key: key, uploadID: uploadID)
    }

    /// Aborts every multipart upload of the bucket; returns how many.
    @discardableResult
    func abortAllUploads() throws -> Int { try boto.abortAllUploads() }

    // MARK: harness paths (on moto's own port)

    private func harness(_ method: String, _ name: String) throws -> [String: Any] {
        let result = runner.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                ["-sS", "--fail-with-body", "--max-time", "15", "-X", method,
                                 "http://127.0.0.1:\(motoPort)/__harness/\(name)"], timeout: 20)
        guard result.exitCode == 0,
              let object = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        else { throw HarnessError("s3_server.py /__harness/\(name): \(result.summary)\nlog:\n\(log().suffix(3000))") }
        return object
    }

    func stats() throws -> S3Stats {
        S3Stats(json: try harness("GET", "stats")["operations"] as? [String: [String: Any]] ?? [:])
    }

    func resetStats() throws { _ = try harness("POST", "reset-stats") }

    /// Closes the relay's listener and every connection through it (abortively: the client
    /// sees a reset); new connections to `port` are refused until `restore()`.
    func cut() throws {
        let relay = try harness("POST", "cut")
        guard relay["listening"] as? Bool == false else { throw HarnessError("relay still listening: \(relay)") }
    }

    /// Listens on the same `port` again.
    func restore() throws {
        let relay = try harness("POST", "restore")
        guard relay["listening"] as? Bool == true, jsonInt(relay["port"]) == Int(port) else {
            throw HarnessError("relay did not come back on \(port): \(relay)")
        }
    }

    /// The launcher's output: werkzeug's access lines (one per request), moto's tracebacks.
    func log() -> String { (try? Data(contentsOf: logURL)).map { String(decoding: $0, as: UTF8.self) } ?? "" }
}
