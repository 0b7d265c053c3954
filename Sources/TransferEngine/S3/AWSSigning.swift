/// How `CurlEasy` signs a request with AWS Signature Version 4 (libcurl's
/// `CURLOPT_AWS_SIGV4`): the provider string `aws:amz:REGION:s3` and the credentials, plus
/// the headers libcurl 7.88 needs to produce a signature S3 accepts. The secret and token
/// never print (`description`, `debugDescription`, the mirror), and the type is not
/// `Codable`: it lives in one attempt's `CurlEasy.Request` and is never stored.
/// Thread: a value; any.
public struct AWSSigning: Equatable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `aws:amz:REGION:SERVICE`.
    public var provider: String
    public var credentials: AWSCredentials

    /// The SHA-256 of the empty string: the payload hash of a request without a body.
    public static let emptyPayloadSHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The payload hash of a streamed body (S3 over https or http; the body is not hashed).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The `x-amz-content-sha256` of a request with a body or without one.
    public static func payloadHash(hasBody: Bool) -> String {
        hasBody ? unsignedPayload : emptyPayloadSHA256
    }

    /// Signs for `region` (checked: letters, digits, hyphens) and `service`.
    public init(region: String, credentials: AWSCredentials, service: String = "s3") throws(S3LocationError) {
        try S3Endpoint.check(region: region)
        provider = "aws:amz:\(region):\(service)"
        self.credentials = credentials
    }

    /// The headers a request signed with these credentials carries: `x-amz-content-sha256`
    /// always (libcurl 7.88 signs with its value as the payload hash; without it S3 answers
    /// SignatureDoesNotMatch), `UNSIGNED-PAYLOAD` with a body and the empty string's hash
    /// without; and `x-amz-security-token` for temporary credentials (libcurl signs every
    /// `x-amz-*` header it sends). A header `existing` already has is not added again.
    public func headers(hasBody: Bool, existing: [String] = []) -> [String] {
        func has(_ name: String) -> Bool {
            existing.contains { header in
                header.firstIndex(of: ":").map { header[..<$0].lowercased().filter { $0 != " " && $0 != "\t" } == name } ?? false
            }
        }
        var headers: [String] = []
        if !has("x-amz-content-sha256") {
            headers.append("x-amz-content-sha256: " + Self.payloadHash(hasBody: hasBody))
        }
        if let token = credentials.sessionToken, !has("x-amz-security-token") {
            headers.append("x-amz-security-token: " + token)
        }
        return headers
    }

    public var description: String { "AWSSigning(provider: \(provider), credentials: \(credentials))" }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["provider": provider, "credentials": credentials.description])
    }
}
