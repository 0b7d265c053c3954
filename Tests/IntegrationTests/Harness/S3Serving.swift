import Foundation

/// What an S3 test needs of a server, whichever implementation it is (S3Implementation): moto
/// (`S3Server`), `rclone serve s3` (`RcloneS3Server`), SeaweedFS (`SeaweedFSServer`). Each runs on
/// 127.0.0.1 in its own directory with a key of its own, signatures checked, the bucket made at
/// start; `environment` is for the daemon alone.
protocol S3Serving: AnyObject {
    /// `http://127.0.0.1:PORT`: what transferd and boto3 use (path style).
    var endpoint: String { get }
    var bucket: String { get }
    var region: String { get }
    var accessKey: String { get }
    var secretKey: String { get }
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`.
    var environment: [String: String] { get }
    /// boto3 against `endpoint` with the server's key.
    var boto: S3BotoClient { get throws }

    /// Starts the server and waits (bounded) until the bucket exists and takes an object.
    func start() throws
    func stop()
    /// Requests, body bytes and error answers per S3 operation since start or `resetStats()`.
    func stats() throws -> S3Stats
    func resetStats() throws
    /// The server's own output (and the relay's, where there is one).
    func log() -> String
}

extension S3Serving {
    var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey, "AWS_REGION": region]
    }
}
