/// One part of a multipart body: its encapsulation boundary, its headers and its content,
/// framing pre-encoded so that the length of every part is known before the first byte is sent.
struct BodyPart: Sendable {
    enum Content: Sendable {
        case bytes([UInt8])
        /// The reader is nil when the body is only measured, not sent.
        case file(SourceReader?)
    }

    /// `--BOUNDARY\r\n` for the first part, `\r\n--BOUNDARY\r\n` for the others.
    let opening: [UInt8]
    /// `Content-Disposition: ...\r\n[Content-Type: ...\r\n]\r\n`.
    let headers: [UInt8]
    let content: Content
    let contentLength: Int64

    init(_ part: FormPart, boundary: String, first: Bool, reader: SourceReader?) {
        opening = Array(((first ? "" : "\r\n") + "--" + boundary + "\r\n").utf8)
        let disposition = Array("Content-Disposition: form-data; name=\"".utf8)
        switch part {
        case .field(let name, let value):
            headers = disposition + Self.escape(name) + Array("\"\r\n\r\n".utf8)
            let bytes = RawPath.bytes(of: value)
            content = .bytes(bytes)
            contentLength = Int64(bytes.count)
        case .file(let name, let source, let filename, let contentType):
            headers = disposition + Self.escape(name) + Array("\"; filename=\"".utf8) + Self.escape(filename)
                + Array("\"\r\nContent-Type: \(contentType)\r\n\r\n".utf8)
            content = .file(reader)
            contentLength = source.size
        }
    }

    /// Saturates: files of up to `NumericLimits.bytes` each can add up past Int64 (UploadPlan refuses such a body).
    var length: Int64 { Int64(opening.count + headers.count).saturatingAdd(contentLength) }

    /// Quoted-parameter escaping as browsers do it (HTML form-data): `"` → %22, CR → %0D,
    /// LF → %0A; everything else, non-ASCII included, goes as it is: UTF-8, or the bytes of a
    /// file name that is not UTF-8 (names, values and file names are `RawPath`s).
    static func escape(_ text: String) -> [UInt8] {
        var escaped: [UInt8] = []
        for byte in RawPath.bytes(of: text) {
            switch byte {
            case UInt8(ascii: "\""): escaped += Array("%22".utf8)
            case UInt8(ascii: "\r"): escaped += Array("%0D".utf8)
            case UInt8(ascii: "\n"): escaped += Array("%0A".utf8)
            default: escaped.append(byte)
            }
        }
        return escaped
    }
}
