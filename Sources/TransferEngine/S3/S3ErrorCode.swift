/// The `<Code>` of an S3 error answer. An open set (S3-compatible servers add their own): the
/// ones transferd treats specially are named here. Compared exactly, as S3 spells them.
/// Thread: a value; any.
public struct S3ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    // Credentials and permissions.
    public static let signatureDoesNotMatch = S3ErrorCode("SignatureDoesNotMatch")
    public static let invalidAccessKeyId = S3ErrorCode("InvalidAccessKeyId")
    public static let accessDenied = S3ErrorCode("AccessDenied")
    public static let expiredToken = S3ErrorCode("ExpiredToken")
    public static let invalidToken = S3ErrorCode("InvalidToken")
    public static let tokenRefreshRequired = S3ErrorCode("TokenRefreshRequired")
    /// Signed for another region than the bucket's.
    public static let authorizationHeaderMalformed = S3ErrorCode("AuthorizationHeaderMalformed")
    public static let requestTimeTooSkewed = S3ErrorCode("RequestTimeTooSkewed")

    // The upload is gone.
    public static let noSuchUpload = S3ErrorCode("NoSuchUpload")

    // Permanent for this request.
    public static let noSuchBucket = S3ErrorCode("NoSuchBucket")
    public static let noSuchKey = S3ErrorCode("NoSuchKey")
    public static let invalidBucketName = S3ErrorCode("InvalidBucketName")
    public static let entityTooLarge = S3ErrorCode("EntityTooLarge")
    public static let entityTooSmall = S3ErrorCode("EntityTooSmall")
    public static let invalidPart = S3ErrorCode("InvalidPart")
    public static let invalidPartOrder = S3ErrorCode("InvalidPartOrder")
    public static let permanentRedirect = S3ErrorCode("PermanentRedirect")

    // Worth another try.
    public static let slowDown = S3ErrorCode("SlowDown")
    public static let internalError = S3ErrorCode("InternalError")
    public static let serviceUnavailable = S3ErrorCode("ServiceUnavailable")
    public static let requestTimeout = S3ErrorCode("RequestTimeout")
    /// A conflicting operation on the same object is in progress.
    public static let operationAborted = S3ErrorCode("OperationAborted")
}
