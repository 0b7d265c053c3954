#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import TransferEngine

@Suite struct RawPathTests {
    /// Byte strings that are not UTF-8 in every way a file name can fail to be.
    static let names: [[UInt8]] = [
        [0xFF], Array("dir".utf8) + [0xFF], [0x80, 0x80], [0xC3], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80],
        [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0xF8, 0x88, 0x80, 0x80, 0x80],
        Array("caf".utf8) + [0xE9] + Array(".txt".utf8),  // Latin-1
        Array("\u{EF80}\u{EFFF}".utf8), Array("a\u{EFAB}".utf8) + [0xAB],  // the escape scalars themselves
    ]

    @Test func everyByteStringComesBackExactly() {
        for bytes in Self.names {
            let path = RawPath.string(fromBytes: bytes)
            #expect(RawPath.bytes(of: path) == bytes, "\(bytes)")
            #expect(RawPath.withCString(path) { strlen($0) } == bytes.count)
        }
        for byte in UInt8(1)...UInt8(255) {
            #expect(RawPath.bytes(of: RawPath.string(fromBytes: [0x61, byte, 0x62])) == [0x61, byte, 0x62])
        }
    }

    @Test func utf8NamesAreTheirUsualString() {
        for name in ["", "plain.txt", "with space/é/naïve café.bin", "日本/🎉.txt", "a\nb\u{1B}[31m"] {
            #expect(RawPath.string(fromBytes: Array(name.utf8)) == name)
            #expect(RawPath.bytes(of: name) == Array(name.utf8))
        }
    }

    @Test func eachInvalidByteIsOneEscapeScalar() {
        let path = RawPath.string(fromBytes: Array("dir".utf8) + [0xFF, 0xC3, 0x28])
        #expect(path.unicodeScalars.map(\.value) == [0x64, 0x69, 0x72, 0xEFFF, 0xEFC3, 0x28])
        // An escape scalar that is really in the name is carried as its three bytes.
        #expect(RawPath.string(fromBytes: Array("\u{EF80}".utf8)).unicodeScalars.map(\.value) == [0xEFEE, 0xEFBE, 0xEF80])
    }

    @Test func aSystemCallSeesTheRawBytes() throws {
        let directory = "/tmp/transferd-rawpath-\(getpid())"
        let name = RawPath.string(fromBytes: Array(directory.utf8) + Array("/f".utf8) + [0xFF])
        mkdir(directory, 0o700)
        defer { rmdir(directory) }
        let fd = RawPath.withCString(name) { open($0, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600) }
        #expect(fd >= 0)
        close(fd)
        // The entry on disk is "f" + 0xFF, not the escape scalar's UTF-8.
        let entries = try #require(opendir(directory))
        var found: [[UInt8]] = []
        while let entry = readdir(entries) {
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if bytes.first != UInt8(ascii: ".") { found.append(bytes) }
        }
        closedir(entries)
        #expect(found == [[0x66, 0xFF]])
        #expect(RawPath.withCString(name) { unlink($0) } == 0)
        // errno survives the conversion.
        #expect(RawPath.withCString(name) { unlink($0) } == -1 && errno == ENOENT)
    }
}
