/// `%XX` escapes, as URLs and RFC 8187 parameters carry them. Pure.
enum PercentEncoding {
    /// The bytes `text` stands for: each valid `%XX` decoded, everything else as it is.
    static func decode(_ text: Substring) -> [UInt8] {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }
}
