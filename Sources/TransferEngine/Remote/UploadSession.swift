/// What a server knows an unfinished upload by, recorded before the first byte of it is sent:
/// the tus upload's URL, or the S3 multipart upload's id and part size. An attempt continues
/// it from what the server reports, never from a local count. Thread: a value; any.
public struct UploadSession: Codable, Equatable, Sendable {
    /// tus: the upload's URL (the creation answer's `Location`, resolved).
    public var url: String?
    /// S3: the multipart upload's `UploadId`.
    public var uploadID: String?
    /// S3: the size of every part but the last, fixed when the upload is created.
    public var partSize: Int64?
    /// tus: the chunk this upload's server accepts, when it refused a larger one (HTTP 413).
    public var chunkSize: Int64?
    /// tus: whether the server offers termination (`Tus-Extension` in its OPTIONS answer); nil
    /// when it did not say. A cancel sends no DELETE where it is false.
    public var terminates: Bool?

    public init(url: String? = nil, uploadID: String? = nil, partSize: Int64? = nil, chunkSize: Int64? = nil,
                terminates: Bool? = nil) {
        self.url = url
        self.uploadID = uploadID
        self.partSize = partSize
        self.chunkSize = chunkSize
        self.terminates = terminates
    }
}

/// An S3 part the server acknowledged: recorded with its ETag and CRC32, which completing the
/// upload names.
public struct UploadedPart: Codable, Equatable, Sendable {
    public var number: Int
    public var etag: String
    public var size: Int64
    /// Its CRC32 (base64), as sent in `x-amz-checksum-crc32` and checked by S3.
    public var checksum: String?

    public init(number: Int, etag: String, size: Int64, checksum: String? = nil) {
        self.number = number
        self.etag = etag
        self.size = size
        self.checksum = checksum
    }
}
