/// The one domain error of transferd. Each case carries what a user needs to act on it;
/// `code` is the stable word stored with a job and printed in JSON (never renamed).
public enum TransferError: Error, Equatable, Sendable {
    /// The server answered with an HTTP status that ends the attempt.
    case httpStatus(Int)
    /// Connecting, sending or receiving failed (curl's reason attached).
    case network(String)
    /// The host could not be resolved or reached: the job waits until it answers (code `network`).
    case unreachable(String)
    /// Certificate or host-name verification failed.
    case tls(String)
    /// The remote entity changed in a way that resume cannot handle.
    case sourceChanged(String)
    /// The finished file does not have the sha256 the job asked for.
    case checksumMismatch(expected: String, actual: String)
    /// The disk is full (ENOSPC) or a file-size limit was hit.
    case diskFull(path: String)
    /// A local file operation failed.
    case io(path: String, operation: String, errno: Int32)
    /// The destination exists and the job may not replace it.
    case destinationExists(path: String)
    /// The transfer moved no bytes for too long.
    case stalled(seconds: Int)
    /// An https request was redirected to http, and the job does not allow that.
    case insecureRedirect
    /// libcurl refused the request as it is set up (a malformed URL, say after a redirect, an
    /// unsupported protocol, a bad argument, too many redirects): never retried.
    case request(String)
    /// A local failure inside libcurl or one of our callbacks (out of memory, a failed write or
    /// read with no more precise reason): never retried (code `io`).
    case local(String)

    /// The stable snake_case word for this error (SPEC.md `error.code`).
    public var code: String {
        switch self {
        case .httpStatus: "http_status"
        case .network, .unreachable: "network"
        case .tls: "tls"
        case .sourceChanged: "source_changed"
        case .checksumMismatch: "checksum_mismatch"
        case .diskFull: "disk_full"
        case .io, .destinationExists, .local: "io"
        case .stalled: "stalled"
        case .insecureRedirect: "insecure_redirect"
        case .request: "request"
        }
    }

    /// One line a user can act on.
    public var message: String {
        switch self {
        case .httpStatus(let status): "the server answered HTTP \(status)"
        case .network(let reason), .unreachable(let reason): reason
        case .tls(let reason): "TLS verification failed: \(reason)"
        case .sourceChanged(let reason): "the source changed: \(reason)"
        case .checksumMismatch(let expected, let actual):
            "sha256 mismatch: expected \(expected), got \(actual)"
        case .diskFull(let path): "no space left on the device holding \(path)"
        case .io(let path, let operation, let errno) where errno == 0:
            "cannot \(operation) \(path)"
        case .io(let path, let operation, let errno):
            "cannot \(operation) \(path): \(SystemError.describe(errno))"
        case .destinationExists(let path): "\(path) already exists (use --overwrite to replace it)"
        case .stalled(let seconds): "no data received for \(seconds) s"
        case .insecureRedirect:
            "refused a redirect from https to http (allow it with --allow-insecure-redirect)"
        case .request(let reason): "libcurl refused the request: \(reason)"
        case .local(let reason): "local failure: \(reason)"
        }
    }

    /// A value stored with the job.
    public var record: JobError { JobError(code: code, message: message) }
}

/// The `error` object of a job: a stable code and a human message.
public struct JobError: Codable, Equatable, Sendable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
