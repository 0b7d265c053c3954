/// An S3 object, `s3://BUCKET/KEY`, and the URLs of the requests about it. The key is taken
/// as written (as the AWS CLI does, `s3://b/a%20b` is the key `a%20b`) and encoded here.
/// Pure. Thread: a value; any.
public struct S3Location: Hashable, Sendable, CustomStringConvertible {
    public let bucket: String
    public let key: String

    /// The longest key S3 stores, in UTF-8 bytes.
    public static let maximumKeyBytes = 1024

    /// A bucket and key that follow S3's rules.
    public init(bucket: String, key: String) throws(S3LocationError) {
        try Self.check(bucket: bucket)
        guard !key.isEmpty else { throw S3LocationError(bucket + "/", .emptyKey) }
        guard key.utf8.count <= Self.maximumKeyBytes else {
            throw S3LocationError("s3://\(bucket)/…", .keyTooLong(bytes: key.utf8.count))
        }
        self.bucket = bucket
        self.key = key
    }

    /// `s3://BUCKET/KEY`.
    public init(parsing uri: String) throws(S3LocationError) {
        guard uri.utf8.count >= 5, uri.utf8.prefix(5).elementsEqual("s3://".utf8) else {
            throw S3LocationError(uri, .notS3URI)
        }
        let rest = uri.dropFirst(5)
        guard let slash = rest.firstIndex(of: "/") else { throw S3LocationError(uri, .emptyKey) }
        do {
            try self.init(bucket: String(rest[..<slash]), key: String(rest[rest.index(after: slash)...]))
        } catch {
            throw S3LocationError(uri, error.reason)
        }
    }

    /// `s3://BUCKET/KEY`.
    public var uri: String { "s3://\(bucket)/\(key)" }
    public var description: String { uri }

    /// The URL of a request about the object: `ENDPOINT/BUCKET/KEY?QUERY` (path-style) or
    /// `https://BUCKET.s3.REGION.amazonaws.com/KEY?QUERY` (virtual-hosted), its path and query
    /// already in SigV4's canonical encoding.
    public func objectURL(_ endpoint: S3Endpoint, _ query: S3Query = .none) -> String {
        endpoint.url(bucket: bucket, path: "/" + S3Encoding.path(key), query: query)
    }

    /// S3's bucket naming rules: 3 to 63 characters of lowercase letters, digits, dots and
    /// hyphens, starting and ending with a letter or digit, no `..`, not an IPv4 address.
    public static func check(bucket: String) throws(S3LocationError) {
        let bytes = Array(bucket.utf8)
        guard (3...63).contains(bytes.count) else { throw S3LocationError(bucket, .bucketLength) }
        func isLetterOrDigit(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard bytes.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }) else {
            throw S3LocationError(bucket, .bucketCharacters)
        }
        guard isLetterOrDigit(bytes[0]), isLetterOrDigit(bytes[bytes.count - 1]), !bucket.contains("..") else {
            throw S3LocationError(bucket, .bucketShape)
        }
        let labels = bucket.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count == 4, labels.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) }) {
            throw S3LocationError(bucket, .bucketShape)
        }
    }
}

/// Why an S3 location, endpoint or region cannot be used: refused when the job is queued.
/// Thread: a value; any.
public struct S3LocationError: Error, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        case notS3URI
        case emptyKey
        case keyTooLong(bytes: Int)
        case bucketLength
        case bucketCharacters
        /// Starts or ends with `.` or `-`, holds `..`, or looks like an IP address.
        case bucketShape
        /// A custom endpoint that is not `http(s)://HOST[:PORT][/PATH]`.
        case endpoint(String)
        case region
    }

    /// What was given (a key too long to show is elided).
    public var value: String
    public var reason: Reason

    init(_ value: String, _ reason: Reason) {
        self.value = value
        self.reason = reason
    }

    /// One line a user can act on.
    public var message: String {
        switch reason {
        case .notS3URI: "'\(value)' is not an S3 location: write s3://BUCKET/KEY"
        case .emptyKey: "'\(value)' names no object: write s3://BUCKET/KEY (the key may not be empty)"
        case .keyTooLong(let bytes):
            "the key of \(value) is \(bytes) bytes long: S3 keys are at most \(S3Location.maximumKeyBytes) bytes of UTF-8"
        case .bucketLength: "bucket name '\(value)' must be 3 to 63 characters long"
        case .bucketCharacters:
            "bucket name '\(value)' may only hold lowercase letters, digits, dots and hyphens"
        case .bucketShape:
            "bucket name '\(value)' must start and end with a letter or digit, hold no '..' and not be an IP address"
        case .endpoint(let why): "S3 endpoint '\(value)': \(why) (write http(s)://HOST[:PORT])"
        case .region: "region '\(value)' must be letters, digits and hyphens (e.g. us-east-1)"
        }
    }
}
