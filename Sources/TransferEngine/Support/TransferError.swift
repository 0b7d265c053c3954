#if canImport(Glibc)
import Glibc
#endif

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
    /// The transfer moved less than `--speed-limit` bytes a second for `--speed-time` seconds
    /// (a host that trickles): retried later, its slot given to another job (code `stalled`).
    case tooSlow(bytesPerSecond: Int64, seconds: Int)
    /// The attempt took longer than the job's `--max-time`: not retried (a limit the user set).
    case timedOut(seconds: Double)
    /// A redirect libcurl would not follow: from https to http (unless the job allows it), or
    /// to anything but http(s), e.g. `file://`. `to` is the refused Location, when known.
    case insecureRedirect(to: String?)
    /// Another process (another transferd) is writing the partial file.
    case busy(path: String)
    /// The destination is a directory, device, FIFO, socket or symlink: only regular files are replaced.
    case notRegularFile(path: String)
    /// The body passed the job's (or the daemon's) `--max-filesize`.
    case tooLarge(limit: Int64)
    /// MKCOL of a WebDAV collection the upload needs was answered with this status.
    case collection(url: String, status: Int)
    /// libcurl refused the request as it is set up (a malformed URL, say after a redirect, an
    /// unsupported protocol, a bad argument, too many redirects): never retried.
    case request(String)
    /// A local failure inside libcurl or one of our callbacks (out of memory, a failed write or
    /// read with no more precise reason): never retried (code `io`).
    case local(String)
    /// The daemon (or the system) had no file descriptor to spare for what an attempt opens:
    /// the partial file, a source file, a socket. The job waits and tries again, using up no
    /// retry: a shortage never fails a job.
    case fdShortage(String)
    /// `--header-command` failed (its exit, a timeout, output that is not `Name: value` lines):
    /// the request has no credentials to go with. Not retried (code `auth`).
    case auth(String)
    /// A resumable upload's server answered outside its protocol (a tus answer without a valid
    /// `Upload-Offset`, offsets that keep disagreeing): retried, as a fault of the moment.
    case protocolViolation(String)
    /// A server's answer that no other try can mend, and that each try would make worse (an S3
    /// CreateMultipartUpload answered without a readable UploadId: each retry would leave
    /// another upload behind): not retried (code `protocol`).
    case unusableAnswer(String)
    /// A limit the server announced or enforces that the job cannot meet (tus `Tus-Max-Size`,
    /// a 413 to the smallest chunk): not retried (code `too_large`).
    case serverLimit(String)
    /// An S3 job found no credentials (or no usable region) where the daemon looks for them:
    /// not retried (code `auth`).
    case credentials(String)
    /// An S3 request was answered with an error (`S3Failure`): code `auth` for refused
    /// credentials, else `http_status`; retried or not as its `kind` says, and NoSuchUpload
    /// (`kind == .uploadGone`) tells the engine to start a new multipart upload.
    case s3(S3Failure)

    /// The stable snake_case word for this error (SPEC.md `error.code`).
    public var code: String {
        switch self {
        case .httpStatus: "http_status"
        case .network, .unreachable: "network"
        case .tls: "tls"
        case .sourceChanged: "source_changed"
        case .checksumMismatch: "checksum_mismatch"
        case .diskFull: "disk_full"
        case .io, .destinationExists, .notRegularFile, .local: "io"
        case .stalled, .tooSlow: "stalled"
        case .timedOut: "timed_out"
        case .insecureRedirect: "insecure_redirect"
        case .busy: "busy"
        case .tooLarge, .serverLimit: "too_large"
        case .collection: "collection"
        case .request: "request"
        case .fdShortage: "fd_shortage"
        case .auth: "auth"
        case .protocolViolation, .unusableAnswer: "protocol"
        case .credentials: "auth"
        case .s3(let failure): failure.errorCode
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
        case .tooSlow(let limit, let seconds):
            "slower than \(limit) bytes/s for \(seconds) s (the daemon's --speed-limit and --speed-time); its slot went to another job"
        case .timedOut(let seconds):
            "the attempt took longer than --max-time \(NetworkOptions.describe(seconds: seconds)) s"
        case .insecureRedirect(let target):
            Self.refusedRedirect(target)
        case .request(let reason): "libcurl refused the request: \(reason)"
        case .local(let reason): "local failure: \(reason)"
        case .busy(let path): "\(path) is being written by another process (another transferd?)"
        case .tooLarge(let limit):
            "the file is larger than --max-filesize \(limit) bytes (\(ByteCount.describe(limit))); its partial file was removed"
        case .notRegularFile(let path):
            "\(path) is not a regular file (a directory, device, FIFO or symlink); only regular files are replaced"
        case .collection(let url, let status):
            "cannot create the collection \(Redaction.url(url)): MKCOL was answered HTTP \(status)"
        case .fdShortage(let what): "\(what) (out of file descriptors; trying again shortly)"
        case .auth(let why): "--header-command \(why)"
        case .protocolViolation(let what), .unusableAnswer(let what), .serverLimit(let what): what
        case .credentials(let why): why
        case .s3(let failure): failure.message
        }
    }

    /// The HTTP status that ended the attempt, when a response said so.
    public var status: Int? {
        switch self {
        case .httpStatus(let status), .collection(_, let status): status
        case .s3(let failure): failure.status
        case .network, .unreachable, .tls, .sourceChanged, .checksumMismatch, .diskFull, .io, .destinationExists,
             .stalled, .tooSlow, .timedOut, .insecureRedirect, .busy, .notRegularFile, .tooLarge, .request, .local, .fdShortage,
             .auth, .protocolViolation, .unusableAnswer, .serverLimit, .credentials: nil
        }
    }

    /// A value stored with the job.
    public var record: JobError { JobError(code: code, message: message) }

    /// What was refused: a downgrade to http, or a scheme transferd never follows.
    private static func refusedRedirect(_ target: String?) -> String {
        guard let target, let scheme = target.firstRange(of: "://").map({ target[..<$0.lowerBound].lowercased() }) else {
            return "refused a redirect to a location transferd does not follow (only http and https)"
        }
        let shown = Redaction.url(target)
        if scheme == "http" {
            return "refused a redirect from https to http (\(shown)); allow it with --allow-insecure-redirect"
        }
        return "refused a redirect to \(shown): transferd follows redirects to http and https only"
    }

    /// A file operation that failed with `errno` as the error the engine decides on: a full
    /// disk (or a file-size limit) pauses the job, a shortage of descriptors makes it wait,
    /// anything else is `io`.
    static func file(path: String, operation: String, errno code: Int32) -> TransferError {
        switch code {
        case ENOSPC, EFBIG, EDQUOT: .diskFull(path: path)
        case _ where isDescriptorShortage(code): .fdShortage("cannot \(operation) \(path): \(SystemError.describe(code))")
        default: .io(path: path, operation: operation, errno: code)
        }
    }

    /// EMFILE (this process) or ENFILE (the system) is out of file descriptors.
    static func isDescriptorShortage(_ code: Int32) -> Bool { code == EMFILE || code == ENFILE }
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
