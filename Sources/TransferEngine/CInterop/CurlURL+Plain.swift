extension CurlURL {
    /// The scheme and host of a URL of the plain shape almost every job has, read over its bytes
    /// without libcurl; nil for any other URL, which `parse` reads. A manifest's URL is checked
    /// by `transferctl` and again by the daemon, and libcurl's parser (a handle made, the URL
    /// copied, split and normalised, the parts copied out) cost ~9,000 instructions each time,
    /// a tenth of a `batch submit`'s own work (BENCHMARKS.md).
    ///
    /// The shape is a subset of what libcurl 7.88 accepts with `flags` (lib/urlapi.c), narrow
    /// enough to be sure of it: `http` or `https` in lowercase, `://`, a host that is either a
    /// dotted quad in canonical form (libcurl rewrites other numeric forms) or starts with a
    /// letter and holds only letters, digits, hyphens and dots between labels (no user, no
    /// IPv6), an optional port of 1 to 65535 without a leading zero, then nothing or a path,
    /// query or fragment of printable ASCII without a backslash (libcurl refuses only control
    /// characters and spaces there). Unit tests hold it to `parse` on generated URLs.
    static func plain(_ text: String) -> Parts? {
        var text = text
        return text.withUTF8(plain)
    }

    private static func plain(_ bytes: UnsafeBufferPointer<UInt8>) -> Parts? {
        // libcurl refuses input past 8,000,000 bytes; a plain URL is far shorter.
        guard bytes.count >= 8, bytes.count <= 8_000, bytes[0] == ascii("h"), bytes[1] == ascii("t"),
              bytes[2] == ascii("t"), bytes[3] == ascii("p") else { return nil }
        let secure = bytes[4] == ascii("s")
        var index = secure ? 5 : 4
        guard bytes[index] == ascii(":"), bytes[index + 1] == ascii("/"), bytes[index + 2] == ascii("/") else { return nil }
        index += 3
        let hostStart = index
        while index < bytes.count, !isAuthorityEnd(bytes[index]), bytes[index] != ascii(":") { index += 1 }
        let host = UnsafeBufferPointer(rebasing: bytes[hostStart..<index])
        guard isPlainHost(host) else { return nil }
        if index < bytes.count, bytes[index] == ascii(":") {
            index += 1
            var port = 0
            let portStart = index
            while index < bytes.count, !isAuthorityEnd(bytes[index]) {
                guard isDigit(bytes[index]), index - portStart < 5 else { return nil }
                port = port * 10 + Int(bytes[index] - ascii("0"))
                index += 1
            }
            guard (1...65535).contains(port), bytes[portStart] != ascii("0") else { return nil }
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte > 0x20, byte < 0x7F, byte != ascii("\\") else { return nil }
            index += 1
        }
        return Parts(scheme: secure ? "https" : "http", host: String(decoding: host, as: UTF8.self))
    }

    private static func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(ascii: character) }

    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        byte == ascii("/") || byte == ascii("?") || byte == ascii("#")
    }

    /// A canonical dotted quad, or a name that starts with a letter (libcurl reads a host that
    /// starts with a digit as a number first) made of letters, digits, hyphens and dots between
    /// non-empty labels.
    private static func isPlainHost(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = host.first, host.last != ascii(".") else { return false }
        if isDigit(first) { return isDottedQuad(host) }
        guard isLetter(first) else { return false }
        var previous = first
        for byte in host.dropFirst() {
            guard isLetter(byte) || isDigit(byte) || byte == ascii("-") || (byte == ascii(".") && previous != ascii("."))
            else { return false }
            previous = byte
        }
        return true
    }

    /// Four parts of 0 to 255 in decimal, none with a leading zero.
    private static func isDottedQuad(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        var parts = 0, value = 0, digits = 0, firstDigit: UInt8 = 0
        for byte in host {
            if byte == ascii(".") {
                guard digits > 0, digits == 1 || firstDigit != ascii("0"), value <= 255 else { return false }
                parts += 1
                (value, digits) = (0, 0)
            } else {
                guard isDigit(byte), digits < 3 else { return false }
                if digits == 0 { firstDigit = byte }
                value = value * 10 + Int(byte - ascii("0"))
                digits += 1
            }
        }
        return parts == 3 && digits > 0 && (digits == 1 || firstDigit != ascii("0")) && value <= 255
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= ascii("0") && byte <= ascii("9") }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= ascii("a") && byte <= ascii("z")) || (byte >= ascii("A") && byte <= ascii("Z"))
    }
}
