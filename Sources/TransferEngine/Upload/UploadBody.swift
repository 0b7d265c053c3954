/// A request body read on demand by libcurl's read callback, with its exact length known up front.
protocol UploadBody: Sendable {
    var contentLength: Int64 { get }
    /// The request's Content-Type, if the body decides it.
    var contentType: String? { get }
    /// Fills as much of `buffer` as the body has left; 0 at the end.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int
}

/// One file as the whole body (`upload -T`).
struct RawBody: UploadBody {
    let reader: SourceReader
    private var offset: Int64 = 0

    init(reader: SourceReader) { self.reader = reader }

    var contentLength: Int64 { reader.source.size }
    /// Guessed from the file's name, as for a form part (a `-H 'Content-Type: ...'` wins).
    var contentType: String? { ContentType.guess(forFilename: String(reader.source.path.split(separator: "/").last ?? "")) }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(TransferError) -> Int {
        guard offset < reader.source.size else { return 0 }
        let count = try reader.read(into: buffer, at: offset)
        offset += Int64(count)
        if offset == reader.source.size { try reader.verify() }
        return count
    }
}
