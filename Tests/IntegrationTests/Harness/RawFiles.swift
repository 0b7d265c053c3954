import Foundation

/// Files named by bytes that need not be UTF-8 (`dir\xff/caf\xe9.txt`), which Foundation's URL
/// and FileManager cannot name: made and read with the system calls themselves.
enum RawFiles {
    /// `base`'s path followed by `/` and `relative`.
    static func path(_ base: URL, _ relative: [UInt8]) -> [UInt8] {
        Array(base.path.utf8) + [UInt8(ascii: "/")] + relative
    }

    /// Writes `data` to `path`, making the missing directories above it.
    static func write(_ data: Data, to path: [UInt8]) throws {
        var slash = path.index(after: path.startIndex)
        while let next = path[slash...].firstIndex(of: UInt8(ascii: "/")) {
            let created = withCString(Array(path[..<next])) { mkdir($0, 0o755) }
            if created != 0, errno != EEXIST { throw HarnessError("mkdir \(describe(path[..<next])): errno \(errno)") }
            slash = path.index(after: next)
        }
        let fd = withCString(path) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw HarnessError("open \(describe(path)): errno \(errno)") }
        defer { close(fd) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == data.count else { throw HarnessError("write \(describe(path)): \(written) of \(data.count)") }
    }

    /// The contents of the file at `path`, nil when it cannot be opened.
    static func read(_ path: [UInt8]) -> Data? {
        let fd = withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[..<count])
        }
        return data
    }

    /// The names in a directory, as bytes, without `.` and `..`.
    static func names(in directory: [UInt8]) -> [[UInt8]] {
        guard let handle = withCString(directory, { opendir($0) }) else { return [] }
        defer { closedir(handle) }
        var names: [[UInt8]] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [UInt8(ascii: ".")], name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names
    }

    /// `dir\xff/caf\xe9.txt`: UTF-8 where it is, `\xHH` for the other bytes.
    static func describe(_ bytes: some Collection<UInt8>) -> String {
        var text = ""
        var rest = Array(bytes)[...]
        while !rest.isEmpty {
            if let valid = (1...min(4, rest.count)).first(where: { String(validating: rest.prefix($0), as: UTF8.self) != nil }) {
                text += String(decoding: rest.prefix(valid), as: UTF8.self)
                rest = rest.dropFirst(valid)
            } else {
                text += String(format: "\\x%02x", rest.first!)
                rest = rest.dropFirst()
            }
        }
        return text
    }

    private static func withCString<Result>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (path.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
