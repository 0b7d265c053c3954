/// An S3 `<Error>` answer: its code (`NoSuchUpload`, `SlowDown`, ...), message and request
/// id. `S3Failure` maps it, with the status, to a `TransferError`. Thread: a value; any.
public struct S3ErrorBody: Equatable, Sendable {
    public var code: S3ErrorCode
    public var message: String?
    public var requestId: String?

    public init(code: S3ErrorCode, message: String? = nil, requestId: String? = nil) {
        self.code = code
        self.message = message
        self.requestId = requestId
    }
}

/// What a CompleteMultipartUpload answered. S3 may answer 200 and still fail: the status line
/// goes out before the parts are assembled, and the failure comes as an `<Error>` body.
public enum S3Completion: Equatable, Sendable {
    /// The object exists; its ETag (`"…-N"` for a multipart object), as sent.
    case completed(etag: String?)
    case failed(S3ErrorBody)
}
