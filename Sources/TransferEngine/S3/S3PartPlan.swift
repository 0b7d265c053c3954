/// How a file is cut into the parts of an S3 multipart upload, within S3's limits (at most
/// 10,000 parts of 5 MiB to 5 GiB, the last one smaller; objects up to 5 TiB): the part size
/// is the one asked for (8 MiB by default), or larger when the file would otherwise need more
/// than 10,000 parts (then `ceil(size / 10,000)` rounded up to a whole MiB). A plan is fixed
/// by the file size and the requested part size, so the engine makes the same plan again on
/// resume. Pure. Thread: a value; any.
public struct S3PartPlan: Equatable, Sendable {
    public static let mebibyte: Int64 = 1 << 20
    public static let minimumPartSize: Int64 = 5 << 20
    public static let maximumPartSize: Int64 = 5 << 30
    public static let defaultPartSize: Int64 = 8 << 20
    public static let maximumParts = 10_000
    public static let maximumObjectSize: Int64 = 5 << 40
    /// Files up to this size go as one PUT (a multipart upload costs at least three requests,
    /// and resuming a 16 MiB upload saves little); the engine decides, this is its default.
    public static let singlePutThreshold: Int64 = 16 << 20

    public let fileSize: Int64
    public let partSize: Int64

    /// Throws for a negative size, an object over 5 TiB, or a requested part size outside
    /// 5 MiB...5 GiB.
    public init(fileSize: Int64, requestedPartSize: Int64? = nil) throws(S3PartPlanError) {
        guard fileSize >= 0 else { throw .negativeSize(fileSize) }
        guard fileSize <= Self.maximumObjectSize else { throw .objectTooLarge(fileSize) }
        if let requestedPartSize, !(Self.minimumPartSize...Self.maximumPartSize).contains(requestedPartSize) {
            throw .partSize(requestedPartSize)
        }
        // (No overflow: fileSize ≤ 5 TiB.)
        let needed = (fileSize + Int64(Self.maximumParts) - 1) / Int64(Self.maximumParts)
        let neededMiB = (needed + Self.mebibyte - 1) / Self.mebibyte * Self.mebibyte
        self.fileSize = fileSize
        partSize = min(Self.maximumPartSize, max(requestedPartSize ?? Self.defaultPartSize, neededMiB, Self.minimumPartSize))
    }

    /// The number of parts; an empty file is one empty part (CompleteMultipartUpload needs one).
    public var partCount: Int {
        fileSize == 0 ? 1 : Int((fileSize + partSize - 1) / partSize)
    }

    /// The bytes of part `number` (1-based), or nil for a number outside 1...partCount.
    public func range(ofPart number: Int) -> Range<Int64>? {
        guard number >= 1, number <= partCount else { return nil }
        let start = Int64(number - 1) * partSize
        return start..<min(fileSize, start + partSize)
    }

    /// Whether a file of `fileSize` bytes goes as one PUT rather than a multipart upload.
    public static func fitsSinglePut(fileSize: Int64, threshold: Int64 = singlePutThreshold) -> Bool {
        fileSize <= threshold
    }
}

/// A file or part size S3 cannot take. Thread: a value; any.
public enum S3PartPlanError: Error, Equatable, Sendable {
    case negativeSize(Int64)
    case objectTooLarge(Int64)
    /// A requested part size outside 5 MiB...5 GiB.
    case partSize(Int64)

    /// One line a user can act on.
    public var message: String {
        switch self {
        case .negativeSize(let size): "a file size cannot be negative (\(size))"
        case .objectTooLarge(let size):
            "the file is \(size) bytes (\(ByteCount.describe(size))); an S3 object is at most 5 TiB"
        case .partSize(let size):
            "the part size \(size) bytes (\(ByteCount.describe(size))) is outside S3's limits: 5 MiB to 5 GiB"
        }
    }
}
