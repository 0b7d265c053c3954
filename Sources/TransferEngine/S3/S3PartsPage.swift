/// One part of a multipart upload, as ListParts lists it. Thread: a value; any.
public struct S3Part: Equatable, Sendable {
    /// 1...10,000.
    public var number: Int
    /// As S3 sends it, quotes included (`"abc…"`).
    public var etag: String
    public var size: Int64

    public init(number: Int, etag: String, size: Int64) {
        self.number = number
        self.etag = etag
        self.size = size
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

    public init(number: Int, etag: String) {
        self.number = number
        self.etag = etag
    }
}
