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
        switch part {
        case .field(let name, let value):
            headers = Array("Content-Disposition: form-data; name=\"\(Self.escape(name))\"\r\n\r\n".utf8)
            content = .bytes(Array(value.utf8))
            contentLength = Int64(value.utf8.count)
        case .file(let name, let source, let filename, let contentType):
            headers = Array(("Content-Disposition: form-data; name=\"\(Self.escape(name))\"; " +
                             "filename=\"\(Self.escape(filename))\"\r\nContent-Type: \(contentType)\r\n\r\n").utf8)
            content = .file(reader)
            contentLength = source.size
        }
    }

    /// Saturates: files of up to `NumericLimits.bytes` each can add up past Int64 (UploadPlan refuses such a body).
    var length: Int64 { Int64(opening.count + headers.count).saturatingAdd(contentLength) }

    /// Quoted-parameter escaping as browsers do it (HTML form-data): `"` → %22, CR → %0D,
    /// LF → %0A; everything else, non-ASCII included, goes as UTF-8.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
