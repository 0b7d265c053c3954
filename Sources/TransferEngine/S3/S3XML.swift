/// Reads the few S3 answers a multipart upload needs, and writes the one body it sends
/// (CompleteMultipartUpload). One rule for every answer: a document whose root is `Error` is
/// the server's error; any other root is read for the fields the request needs (S3's stores
/// name their roots differently: `InitiateMultipartUpload` for `…Result`, `…Response` for
/// `…Result`), and only a missing or invalid field is refused. Each reader takes the whole body
/// (at most `maximumDocumentBytes`) and throws `S3XMLError` for anything it cannot trust; none
/// traps. Namespaces (`xmlns=…`, prefixes) and whitespace do not matter; elements it does not
/// know are skipped. Pure. Thread: any.
public enum S3XML {
    /// The largest answer read: a page of 1,000 parts or uploads is well under 1 MiB.
    public static let maximumDocumentBytes = 8 << 20

    /// The `UploadId` of an `InitiateMultipartUploadResult` (CreateMultipartUpload's answer).
    public static func uploadId(_ body: [UInt8]) throws(S3XMLError) -> String {
        var uploadId: String?
        let root = try answer(body) { event, depth throws(S3XMLError) in
            if case .close("UploadId", let text) = event, depth == 2 { uploadId = text }
        }
        guard let uploadId, !uploadId.isEmpty else { throw .missingField("UploadId", in: root) }
        try checkUploadId(uploadId)
        return uploadId
    }

    /// A `ListPartsResult` page: every `<Part>`'s number, ETag and size, and where the next
    /// page starts.
    public static func partsPage(_ body: [UInt8]) throws(S3XMLError) -> S3PartsPage {
        var page = S3PartsPage(parts: [], isTruncated: false, nextPartNumberMarker: nil)
        var part: (number: Int?, etag: String?, size: Int64?, checksum: String?)?
        let root = try answer(body) { event, depth throws(S3XMLError) in
            switch (event, depth) {
            case (.open("Part"), 2): part = (nil, nil, nil, nil)
            case (.close("PartNumber", let text), 3) where part != nil:
                part?.number = Int(try number(text, field: "PartNumber", in: 1...Int64(S3PartPlan.maximumParts)))
            case (.close("ETag", let text), 3) where part != nil: part?.etag = text
            case (.close("ChecksumCRC32", let text), 3) where part != nil && !text.isEmpty: part?.checksum = text
            case (.close("Size", let text), 3) where part != nil:
                part?.size = try number(text, field: "Size", in: 0...S3PartPlan.maximumPartSize)
            case (.close("Part", _), 2):
                guard let found = part, let number = found.number else { throw .missingField("PartNumber", in: "Part") }
                guard let etag = found.etag, !etag.isEmpty else { throw .missingField("ETag", in: "Part") }
                guard let size = found.size else { throw .missingField("Size", in: "Part") }
                page.parts.append(S3Part(number: number, etag: etag, size: size, checksumCRC32: found.checksum))
                part = nil
            case (.close("IsTruncated", let text), 2): page.isTruncated = try bool(text, field: "IsTruncated")
            case (.close("NextPartNumberMarker", let text), 2) where !text.isEmpty:
                page.nextPartNumberMarker = Int(try number(text, field: "NextPartNumberMarker",
                                                           in: 0...Int64(S3PartPlan.maximumParts)))
            default: break
            }
        }
        if page.isTruncated, page.nextPartNumberMarker == nil {
            throw .missingField("NextPartNumberMarker", in: root)
        }
        return page
    }

    /// An `<Error>` answer's code, message and request id.
    public static func error(_ body: [UInt8]) throws(S3XMLError) -> S3ErrorBody {
        var code: String?
        var message: String?
        var requestId: String?
        try S3XMLReader(body).walk(root: "Error") { event, depth throws(S3XMLError) in
            guard case .close(let name, let text) = event, depth == 2 else { return }
            switch name {
            case "Code": code = text
            case "Message": message = text
            case "RequestId": requestId = text
            default: break
            }
        }
        guard let code, !code.isEmpty else { throw .missingField("Code", in: "Error") }
        return S3ErrorBody(code: S3ErrorCode(code), message: message, requestId: requestId)
    }

    /// A CompleteMultipartUpload answer, which may be an `<Error>` even with status 200. Any
    /// other root with an `ETag` is the completed object (moto 5.2.1 names it
    /// `CompleteMultipartUploadResponse`).
    public static func completion(_ body: [UInt8]) throws(S3XMLError) -> S3Completion {
        var etag: String?
        let root: String
        do {
            root = try answer(body) { event, depth throws(S3XMLError) in
                if case .close("ETag", let text) = event, depth == 2 { etag = text }
            }
        } catch .errorDocument {
            return .failed(try error(body))
        }
        // (Without an ETag only a root that names the operation says it completed: an HTML page does not.)
        guard etag?.isEmpty == false || root.hasPrefix("CompleteMultipartUpload") else { throw .missingField("ETag", in: root) }
        return .completed(etag: etag)
    }

    /// Walks an answer that is not an `<Error>` (which throws `.errorDocument`, for the caller
    /// to read with `error(_:)`); returns its root's name.
    private static func answer(_ body: [UInt8], _ visit: (S3XMLReader.Event, Int) throws(S3XMLError) -> Void) throws(S3XMLError) -> String {
        try S3XMLReader(body).walk(root: nil) { event, depth throws(S3XMLError) in
            if depth == 1, case .open("Error") = event { throw .errorDocument }
            try visit(event, depth)
        }
    }

    /// The CompleteMultipartUpload body: the parts in ascending order (sorted here), each
    /// number once and within 1...10,000, each ETag as UploadPart answered it (its quotes
    /// kept). Send it with `Content-Type: application/xml`.
    public static func completeMultipartUploadBody(_ parts: [S3CompletedPart]) throws(S3XMLError) -> String {
        guard !parts.isEmpty else { throw .missingField("Part", in: "CompleteMultipartUpload") }
        let sorted = parts.sorted { $0.number < $1.number }
        var body = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
            + #"<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"#
        var previous = 0
        for part in sorted {
            guard (1...S3PartPlan.maximumParts).contains(part.number), part.number != previous else {
                throw .invalidValue(String(part.number), field: "PartNumber")
            }
            guard !part.etag.isEmpty,
                  !part.etag.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .invalidValue(part.etag, field: "ETag")
            }
            let checksum = part.checksumCRC32.map { "<ChecksumCRC32>\(escaped($0))</ChecksumCRC32>" } ?? ""
            body += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(escaped(part.etag))</ETag>\(checksum)</Part>"
            previous = part.number
        }
        return body + "</CompleteMultipartUpload>"
    }

    /// `&`, `<` and `>` as entities (quotes need none in text, and ETags keep theirs readable).
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            default: result.append(character)
            }
        }
        return result
    }

    // MARK: Values

    /// Digits only, within `range` (a huge number is refused, never wrapped).
    static func number(_ text: String, field: String, in range: ClosedRange<Int64>) throws(S3XMLError) -> Int64 {
        let digits = text.trimmingXMLSpace
        guard !digits.isEmpty, digits.utf8.count <= 19, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int64(digits), range.contains(value) else {
            throw .invalidNumber(text, field: field)
        }
        return value
    }

    static func bool(_ text: String, field: String) throws(S3XMLError) -> Bool {
        switch text.trimmingXMLSpace.lowercased() {
        case "true": return true
        case "false": return false
        default: throw .invalidValue(text, field: field)
        }
    }

    /// An upload id goes into every later request's query (encoded) and the database: no
    /// control characters, and a sane length.
    static func checkUploadId(_ uploadId: String) throws(S3XMLError) {
        guard uploadId.utf8.count <= 1024, !uploadId.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidValue(uploadId, field: "UploadId")
        }
    }
}

extension String {
    /// Without XML white space (space, tab, CR, LF) at either end.
    fileprivate var trimmingXMLSpace: String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
