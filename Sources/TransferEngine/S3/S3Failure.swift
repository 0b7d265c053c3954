/// An S3 request answered with an error: its status, S3's code and message, and what the
/// engine does about it (`kind`), decided from the code first and the status when the code
/// is not one transferd knows (or there was no `<Error>` body). It becomes
/// `TransferError.s3`; `RetryPolicy` retries `.retried` and `.uploadGone`. Never holds a
/// credential (S3 does not echo the secret). Thread: a value; any.
public struct S3Failure: Equatable, Sendable {
    /// What the engine does.
    public enum Kind: String, Equatable, Sendable {
        /// The credentials, token, region or clock were refused: not retried (error code `auth`).
        case auth
        /// NoSuchUpload: the multipart upload was completed, aborted or expired. The engine
        /// forgets its UploadId and parts and starts a new upload (retried: the next attempt does).
        case uploadGone = "upload_gone"
        /// Another try cannot succeed (no such bucket or key, a bad name, too large): not retried.
        case refused
        /// The server is busy or failed (SlowDown, InternalError, 5xx, 408, 429): retried.
        case retried
    }

    public var status: Int
    /// Nil when the answer had no S3 `<Error>` body.
    public var code: S3ErrorCode?
    /// S3's message, on one line and at most 200 characters.
    public var serverMessage: String?
    public var kind: Kind

    /// The failure of an answer with `status` (not 2xx) and its `<Error>` body, if it had one.
    public init(status: Int, error: S3ErrorBody?) {
        self.status = status
        code = error?.code
        serverMessage = error?.message.flatMap(Self.oneLine)
        kind = Self.kind(status: status, code: error?.code)
    }

    /// The error the engine ends the attempt with.
    public static func transferError(status: Int, error: S3ErrorBody?) -> TransferError {
        .s3(S3Failure(status: status, error: error))
    }

    public var isRetried: Bool { kind == .retried || kind == .uploadGone }

    /// The stable error code word: `auth` for refused credentials, else `http_status`.
    public var errorCode: String { kind == .auth ? "auth" : "http_status" }

    /// One line: what S3 said, and what to check.
    public var message: String {
        let said = "S3 answered HTTP \(status)" + (code.map { " \($0)" } ?? "")
        let server = serverMessage.map { " (\"\($0)\")" } ?? ""
        return said + ": " + hint + server
    }

    static func kind(status: Int, code: S3ErrorCode?) -> Kind {
        switch code {
        case .signatureDoesNotMatch?, .invalidAccessKeyId?, .accessDenied?, .expiredToken?, .invalidToken?,
             .tokenRefreshRequired?, .authorizationHeaderMalformed?, .requestTimeTooSkewed?:
            return .auth
        case .noSuchUpload?: return .uploadGone
        case .slowDown?, .internalError?, .serviceUnavailable?, .requestTimeout?, .operationAborted?: return .retried
        case .noSuchBucket?, .noSuchKey?, .invalidBucketName?, .entityTooLarge?, .entityTooSmall?, .invalidPart?,
             .invalidPartOrder?, .permanentRedirect?:
            return .refused
        default: break
        }
        switch status {
        case 401, 403: return .auth
        case 408, 429, 500...599: return .retried
        default: return .refused
        }
    }

    /// What to check, never a secret.
    private var hint: String {
        switch code {
        case .signatureDoesNotMatch?:
            "the request signature does not match: check the secret access key that goes with the access key id "
                + "(if it is right, the server computes this request's signature differently: some S3-compatible "
                + "servers do for keys with characters outside ASCII)"
        case .invalidAccessKeyId?:
            "the access key id is unknown to this server: check AWS_ACCESS_KEY_ID or the profile's aws_access_key_id, and the endpoint"
        case .accessDenied?: "access denied: check the permissions of these credentials on the bucket and key"
        case .expiredToken?, .tokenRefreshRequired?:
            "the session token has expired: get fresh temporary credentials (AWS_SESSION_TOKEN or aws_session_token)"
        case .invalidToken?: "the session token is not valid: check AWS_SESSION_TOKEN or the profile's aws_session_token"
        case .authorizationHeaderMalformed?: "the request was signed for another region than the bucket's: check the region"
        case .requestTimeTooSkewed?: "this machine's clock is too far from the server's: correct the clock"
        case .noSuchUpload?: "the multipart upload no longer exists (completed, aborted or expired); starting a new one"
        case .noSuchBucket?: "the bucket does not exist: check the bucket name and the endpoint"
        case .noSuchKey?: "the object does not exist"
        case .invalidBucketName?: "the server refuses the bucket name"
        case .entityTooLarge?: "the object or part is larger than the server accepts"
        case .entityTooSmall?: "a part other than the last is smaller than the server's minimum part size"
        case .invalidPart?, .invalidPartOrder?: "the parts named do not match the parts uploaded"
        case .permanentRedirect?: "the bucket is in another region or at another endpoint: check the region"
        case .slowDown?: "the server asks to slow down; retrying later"
        default:
            switch kind {
            case .auth: "the credentials were refused: check the access key, secret, session token and region"
            case .retried: "the server failed; retrying later"
            case .uploadGone, .refused: "the request was refused"
            }
        }
    }

    private static func oneLine(_ text: String) -> String? {
        // Other control characters stay, for every output to show escaped (`\x1b`), not to drop.
        let line = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        guard !line.isEmpty else { return nil }
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }
}
