import Testing
@testable import TransferEngine

@Suite struct CRC32Tests {
    private func crc(_ bytes: [UInt8]) -> CRC32 {
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update($0) }
        return crc
    }

    /// The bit-at-a-time definition, to check the sliced tables against.
    private func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func theCheckValueAndS3sBase64() {
        #expect(crc(Array("123456789".utf8)).value == 0xCBF4_3926)
        #expect(crc(Array("123456789".utf8)).base64 == "y/Q5Jg==")
        #expect(crc([]).value == 0)
    }

    @Test func matchesTheDefinitionAtEveryLengthAndSplit() {
        var generator = SplitMix64(seed: 7)
        let bytes = (0..<300).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        for length in [1, 7, 8, 9, 15, 16, 17, 255, 300] {
            let slice = Array(bytes[0..<length])
            #expect(crc(slice).value == reference(slice), "length \(length)")
            var split = CRC32()
            slice[0..<(length / 3)].withUnsafeBytes { split.update($0) }
            slice[(length / 3)...].withUnsafeBytes { split.update($0) }
            #expect(split.value == reference(slice), "length \(length) in two updates")
        }
    }
}
