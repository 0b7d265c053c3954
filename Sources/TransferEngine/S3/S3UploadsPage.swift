/// A multipart upload in progress, as ListMultipartUploads lists it. Thread: a value; any.
public struct S3Upload: Equatable, Sendable {
    public var key: String
    public var uploadId: String
    /// When it was created (ISO 8601, as sent), if sent.
    public var initiated: String?

    public init(key: String, uploadId: String, initiated: String? = nil) {
        self.key = key
        self.uploadId = uploadId
        self.initiated = initiated
    }
}

/// One page of a ListMultipartUploads answer (`ListMultipartUploadsResult`). When
/// `isTruncated`, ask again with the two markers. Thread: a value; any.
public struct S3UploadsPage: Equatable, Sendable {
    public var uploads: [S3Upload]
    public var isTruncated: Bool
    public var nextKeyMarker: String?
    public var nextUploadIdMarker: String?

    public init(uploads: [S3Upload], isTruncated: Bool, nextKeyMarker: String?, nextUploadIdMarker: String?) {
        self.uploads = uploads
        self.isTruncated = isTruncated
        self.nextKeyMarker = nextKeyMarker
        self.nextUploadIdMarker = nextUploadIdMarker
    }
}
