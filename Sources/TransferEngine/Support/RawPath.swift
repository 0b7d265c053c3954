#if canImport(Glibc)
import Glibc
#endif

/// File names are bytes, transferd's strings are Unicode: this is the one lossless mapping
/// between them. A path's bytes that are valid UTF-8 are their characters; every other byte
/// (0x80–0xFF) is carried as the scalar U+EF00 + byte, U+EF80–U+EFFF (a private-use range, the
/// one MirBSD's OPTU-8 uses for the same purpose). A name that really contains one of those
/// scalars has its UTF-8 bytes carried the same way, so every byte string maps to a String
/// and back to exactly the same bytes. A valid UTF-8 name (almost every name) is its usual String.
///
/// Paths travel as such Strings everywhere (the control protocol, the store, messages); they
/// become bytes again only where they meet the file system (`withCString`) or the wire (a
/// URL's percent-encoding, a multipart header). Thread: any.
public enum RawPath {
    /// The scalars that stand for raw bytes.
    public static let escapes: ClosedRange<UInt32> = 0xEF80...0xEFFF

    /// The path of `bytes` (no NUL), e.g. a directory entry's name.
    public static func string<Bytes: Collection<UInt8>>(fromBytes bytes: Bytes) -> String {
        let bytes = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let length = validSequenceLength(bytes, at: index)
            if length == 0 {
                scalars.append(escape(bytes[index]))
                index += 1
                continue
            }
            let scalar = String(decoding: bytes[index..<index + length], as: UTF8.self).unicodeScalars.first!
            if escapes.contains(scalar.value) {
                for byte in bytes[index..<index + length] { scalars.append(escape(byte)) }
            } else {
                scalars.append(scalar)
            }
            index += length
        }
        return String(scalars)
    }

    /// The path of a NUL-terminated C string (`readdir`, `realpath`, `getcwd`).
    public static func string(cString: UnsafePointer<CChar>) -> String {
        var length = 0
        while cString[length] != 0 { length += 1 }
        return cString.withMemoryRebound(to: UInt8.self, capacity: length) {
            string(fromBytes: UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The bytes `path` stands for.
    public static func bytes(of path: some StringProtocol) -> [UInt8] {
        guard path.unicodeScalars.contains(where: isEscape) else { return Array(path.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(UInt8(scalar.value & 0xFF))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// Calls `body` with the NUL-terminated bytes of `path`, for a system call; `errno` is as
    /// `body` left it.
    public static func withCString<Result>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        guard path.unicodeScalars.contains(where: isEscape) else { return try path.withCString(body) }
        let bytes = self.bytes(of: path)
        var code: Int32 = 0
        let result = try withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
            buffer[bytes.count] = 0
            defer { code = errno }
            return try body(UnsafePointer(buffer.baseAddress!))
        }
        errno = code
        return result
    }

    /// Where the last "/" of `path` is, found among its bytes: "/" is ASCII, never part of
    /// another character's bytes, and the kernel splits a path there even where a `Character`
    /// search would see it joined with a combining mark after it. ~17 times cheaper than
    /// `lastIndex(of: "/")`, which steps back through grapheme clusters (`bench/instructions.sh`).
    public static func lastSlash(in path: String) -> String.Index? {
        path.utf8.lastIndex(of: UInt8(ascii: "/"))
    }

    /// Whether `scalar` stands for a raw byte.
    public static func isEscape(_ scalar: Unicode.Scalar) -> Bool { escapes.contains(scalar.value) }

    private static func escape(_ byte: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(0xEF00 + UInt32(byte))!
    }

    /// The length of the well-formed UTF-8 sequence at `index` (Unicode's table 3-7), 0 if none.
    private static func validSequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let second: ClosedRange<UInt8>
        let length: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: (second, length) = (0x80...0xBF, 2)
        case 0xE0: (second, length) = (0xA0...0xBF, 3)
        case 0xE1...0xEC, 0xEE...0xEF: (second, length) = (0x80...0xBF, 3)
        case 0xED: (second, length) = (0x80...0x9F, 3)
        case 0xF0: (second, length) = (0x90...0xBF, 4)
        case 0xF1...0xF3: (second, length) = (0x80...0xBF, 4)
        case 0xF4: (second, length) = (0x80...0x8F, 4)
        default: return 0
        }
        guard index + length <= bytes.count, second.contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return 0 }
        return length
    }
}
