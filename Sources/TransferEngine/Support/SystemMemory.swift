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

    /// `Dirty:` plus `Writeback:` of a /proc/meminfo text, in bytes. Read in place, byte by byte:
    /// a finishing group asks before each syncfs.
    static func dirtyBytes(meminfo: ArraySlice<UInt8>) -> Int64? {
        var total: Int64 = 0
        var found = 0
        var start = meminfo.startIndex
        while start < meminfo.endIndex {
            let end = meminfo[start...].firstIndex(of: UInt8(ascii: "\n")) ?? meminfo.endIndex
            let line = meminfo[start..<end]
            start = end + 1
            guard line.starts(with: "Dirty:".utf8) || line.starts(with: "Writeback:".utf8),
                  let colon = line.firstIndex(of: UInt8(ascii: ":")), let kibibytes = number(in: line[(colon + 1)...]) else { continue }
            total += kibibytes * 1024
            found += 1
        }
        return found == 2 ? total : nil
    }

    /// The number a field's value starts with, after its spaces (`   1234 kB`); nil for none.
    private static func number(in value: ArraySlice<UInt8>) -> Int64? {
        let digits = value.drop { $0 == UInt8(ascii: " ") }.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }
}
