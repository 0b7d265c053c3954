/// One part of a multipart upload, as ListParts lists it. Thread: a value; any.
public struct S3Part: Equatable, Sendable {
    /// 1...10,000.
    public var number: Int
    /// As S3 sends it, quotes included (`"abc…"`).
    public var etag: String
    public var size: Int64
    /// `ChecksumCRC32` (base64), when the upload declared CRC32.
    public var checksumCRC32: String?

    public init(number: Int, etag: String, size: Int64, checksumCRC32: String? = nil) {
        self.number = number
        self.etag = etag
        self.size = size
        self.checksumCRC32 = checksumCRC32
    }
}

/// One page of a ListParts answer (`ListPartsResult`). When `isTruncated`, ask again with
/// `S3Query.listParts(uploadId:partNumberMarker: nextPartNumberMarker)`. Thread: a value; any.
public struct S3PartsPage: Equatable, Sendable {
    public var parts: [S3Part]
    /// A missing `IsTruncated` is false.
    public var isTruncated: Bool
    /// Always set when `isTruncated`.
    public var nextPartNumberMarker: Int?

    public init(parts: [S3Part], isTruncated: Bool, nextPartNumberMarker: Int?) {
        self.parts = parts
        self.isTruncated = isTruncated
        self.nextPartNumberMarker = nextPartNumberMarker
    }
}

/// A part to name in CompleteMultipartUpload: its number and the ETag its UploadPart (or
/// ListParts) answered. Thread: a value; any.
public struct S3CompletedPart: Equatable, Sendable {
    public var number: Int
    public var etag: String
    /// The part's CRC32 (base64), which Complete must name for an upload that declared CRC32.
    public var checksumCRC32: String?

    public init(number: Int, etag: String, checksumCRC32: String? = nil) {
        self.number = number
        self.etag = etag
        self.checksumCRC32 = checksumCRC32
    }
}
