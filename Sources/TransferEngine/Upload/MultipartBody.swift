/// A multipart/form-data body streamed part by part, phase by phase (AFNetworking's
/// AFMultipartBodyStream, as a value): each read fills the buffer across phase and part
/// boundaries; files are read with pread in buffer-sized chunks, never whole.
struct MultipartBody: UploadBody, Sendable {
    let boundary: String
    private let parts: [BodyPart]
    private let closing: [UInt8]
    private var index = 0
    private(set) var phase: BodyPart.Phase

    /// `readers` holds one open reader per file part, in order (none to only measure the body).
    init(form: [FormPart], boundary: String, readers: [SourceReader] = []) {
        precondition(!form.isEmpty, "a multipart body needs at least one part")
        self.boundary = boundary
        var readers = readers[...]
        parts = form.enumerated().map { offset, part in
            let reader: SourceReader?
            if case .file = part { reader = readers.popFirst() } else { reader = nil }
            return BodyPart(part, boundary: boundary, first: offset == 0, reader: reader)
        }
        closing = Array("\r\n--\(boundary)--\r\n".utf8)
        phase = .boundary(offset: 0)
    }

    var contentLength: Int64 { parts.reduce(Int64(closing.count)) { $0.saturatingAdd($1.length) } }

    var contentType: String? { "multipart/form-data; boundary=\(boundary)" }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int {
        var filled = 0
        while filled < buffer.count, phase != .done {
            filled += try step(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
        }
        return filled
    }

    /// Copies from the current phase and moves to the next phase when it is exhausted.
    private mutating func step(into space: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int {
        let part = parts[index]
        switch phase {
        case .boundary(let offset):
            let count = Self.copy(part.opening, from: offset, into: space)
            phase = offset + count == part.opening.count ? .headers(offset: 0) : .boundary(offset: offset + count)
            return count
        case .headers(let offset):
            let count = Self.copy(part.headers, from: offset, into: space)
            phase = offset + count == part.headers.count ? .body(offset: 0) : .headers(offset: offset + count)
            return count
        case .body(let offset):
            var count = 0
            switch part.content {
            case .bytes(let bytes):
                count = Self.copy(bytes, from: Int(offset), into: space)
            case .file(let reader):
                guard let reader else { preconditionFailure("a multipart body that is sent needs its readers") }
                if offset < reader.source.size { count = try reader.read(into: space, at: offset) }
                if offset + Int64(count) == reader.source.size { try reader.verify() }
            }
            if offset + Int64(count) < part.contentLength {
                phase = .body(offset: offset + Int64(count))
            } else if index + 1 < parts.count {
                index += 1
                phase = .boundary(offset: 0)
            } else {
                phase = .closingBoundary(offset: 0)
            }
            return count
        case .closingBoundary(let offset):
            let count = Self.copy(closing, from: offset, into: space)
            phase = offset + count == closing.count ? .done : .closingBoundary(offset: offset + count)
            return count
        case .done:
            return 0
        }
    }

    private static func copy(_ bytes: [UInt8], from offset: Int, into space: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(bytes.count - offset, space.count)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            space.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        return count
    }
}
