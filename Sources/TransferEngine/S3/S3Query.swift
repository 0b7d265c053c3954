/// The query of an S3 request, written the way SigV4 canonicalises it, because libcurl 7.88
/// signs the query exactly as the URL carries it (it neither sorts nor re-encodes it, and
/// signs a bare `uploads` where S3 expects `uploads=`): every name and value percent-encoded
/// (`S3Encoding.component`), sorted by encoded name then value, each written `name=value`
/// (`uploads=` for an empty value). Pure. Thread: a value; any.
public struct S3Query: Equatable, Sendable {
    /// One `name=value` pair, as given (not encoded).
    public struct Parameter: Equatable, Sendable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String = "") {
            self.name = name
            self.value = value
        }
    }

    public var parameters: [Parameter]

    public init(_ parameters: [Parameter] = []) { self.parameters = parameters }

    /// No query.
    public static let none = S3Query()

    /// CreateMultipartUpload (`POST KEY?uploads=`).
    public static let createMultipartUpload = S3Query([Parameter("uploads")])

    /// UploadPart (`PUT KEY?partNumber=N&uploadId=ID`).
    public static func uploadPart(number: Int, uploadId: String) -> S3Query {
        S3Query([Parameter("partNumber", String(number)), Parameter("uploadId", uploadId)])
    }

    /// CompleteMultipartUpload (`POST`) and AbortMultipartUpload (`DELETE`): `KEY?uploadId=ID`.
    public static func upload(_ uploadId: String) -> S3Query {
        S3Query([Parameter("uploadId", uploadId)])
    }

    /// ListParts (`GET KEY?max-parts=N&part-number-marker=M&uploadId=ID`): the page after part
    /// `partNumberMarker` (nil: the first page).
    public static func listParts(uploadId: String, partNumberMarker: Int? = nil, maxParts: Int = 1000) -> S3Query {
        var parameters = [Parameter("max-parts", String(maxParts)), Parameter("uploadId", uploadId)]
        if let partNumberMarker { parameters.append(Parameter("part-number-marker", String(partNumberMarker))) }
        return S3Query(parameters)
    }

    /// `?a=1&b=` in canonical order, or "" for no parameters.
    public var encoded: String {
        guard !parameters.isEmpty else { return "" }
        let pairs = parameters.map { (S3Encoding.component($0.name), S3Encoding.component($0.value)) }
            .sorted { $0.0 == $1.0 ? $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        return "?" + pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }
}

/// SigV4's URI encoding (RFC 3986): every UTF-8 byte but the unreserved `A-Z a-z 0-9 - . _ ~`
/// as `%XX` with uppercase hex. Pure.
public enum S3Encoding {
    /// An object key in a path: `/` kept (S3 does not encode it, nor encode twice).
    public static func path(_ text: String) -> String { encode(text, keepingSlash: true) }

    /// A query name or value: `/` encoded too.
    public static func component(_ text: String) -> String { encode(text, keepingSlash: false) }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"): true
        default: false
        }
    }

    private static func encode(_ text: String, keepingSlash: Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
