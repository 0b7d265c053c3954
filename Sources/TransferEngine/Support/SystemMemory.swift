#if canImport(Glibc)
import Glibc
#endif

/// What /proc/meminfo says about the page cache. Thread: any (blocking: a file read).
enum SystemMemory {
    /// Bytes of the page cache that are dirty or being written back, system-wide (nil when
    /// /proc/meminfo cannot be read).
    static func dirtyBytes() -> Int64? {
        let fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return dirtyBytes(meminfo: buffer[..<count])
    }

    /// `Dirty:` plus `Writeback:` of a /proc/meminfo text, in bytes.
    static func dirtyBytes(meminfo: ArraySlice<UInt8>) -> Int64? {
        var total: Int64 = 0
        var found = 0
        for line in meminfo.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count >= 2, fields[0].elementsEqual("Dirty:".utf8) || fields[0].elementsEqual("Writeback:".utf8),
                  let kibibytes = Int64(String(decoding: fields[1], as: UTF8.self)) else { continue }
            total += kibibytes * 1024
            found += 1
        }
        return found == 2 ? total : nil
    }
}
