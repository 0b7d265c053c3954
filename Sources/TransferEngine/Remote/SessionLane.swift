/// One request of a session in flight: its handle, its body as far as it is read, and its
/// answer as far as it arrived. Owned by its `SessionTransfer`. Thread: the loop thread.
final class SessionLane {
    let request: SessionRequest
    let easy: CurlEasy
    /// Body bytes read so far.
    private(set) var sent: Int64 = 0
    private(set) var response: SessionResponse?
    private var parser = ResponseHeadParser()
    var readFailure: TransferError?

    /// A response body is kept up to one byte past the largest S3 answer read, so that a
    /// larger one is refused as too large rather than cut into malformed XML (SeaweedFS lists
    /// 10,000 parts a page, about 1.5 MiB).
    static let responseLimit = S3XML.maximumDocumentBytes + 1

    init(_ request: SessionRequest, headers: [String], tls: TLSOptions, network: NetworkOptions, signing: AWSSigning?,
         deadline: AttemptDeadline?, stallSeconds: Int) throws(TransferError) {
        self.request = request
        var curl = CurlEasy.Request(url: request.url)
        curl.headers = request.headers + headers + (request.checksum.map { ["\(SessionRequest.checksumHeader): \($0)"] } ?? [])
        curl.tls = tls
        curl.network = network
        curl.awsSigning = request.signed ? signing : nil
        curl.timeoutMilliseconds = deadline?.remainingMilliseconds()
        curl.followRedirects = false
        curl.lowSpeedSeconds = stallSeconds
        switch request.body {
        case .none: curl.method = request.method == "GET" ? nil : request.method
        case .file, .bytes: curl.body = CurlEasy.Body(method: request.method, length: request.bodyLength)
        }
        do {
            easy = try CurlEasy(curl)
        } catch {
            throw .network("cannot set up the request: \(error)")
        }
    }

    /// The body is a range of the source file (what progress and the pacer count).
    var sendsFile: Bool {
        if case .file = request.body { true } else { false }
    }

    /// libcurl sends the body again from its start (an authentication round trip).
    func rewind() { sent = 0 }

    /// Fills `buffer` with the body's next bytes; 0 at its end. The file is checked against its
    /// snapshot once its last byte is read.
    func read(into buffer: UnsafeMutableRawBufferPointer, from reader: SourceReader) throws(TransferError) -> Int {
        switch request.body {
        case .none:
            return 0
        case .bytes(let bytes):
            let count = min(buffer.count, bytes.count - Int(sent))
            guard count > 0 else { return 0 }
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(sent)..<Int(sent) + count]))
            }
            sent += Int64(count)
            return count
        case .file(let range):
            let left = range.count64 - sent
            guard left > 0, !buffer.isEmpty else { return 0 }
            let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(Int64(buffer.count), left))]),
                                        at: range.lowerBound + sent)
            sent += Int64(count)
            if range.upperBound == reader.source.size, sent == range.count64 { try reader.verify() }
            return count
        }
    }

    /// A header line; the final head once it is complete.
    func header(_ line: UnsafeRawBufferPointer) -> ResponseHead? {
        guard let head = parser.consume(line) else { return nil }
        if head.status >= 200 { response = SessionResponse(status: head.status, fields: head.fields) }
        return head
    }

    /// Keeps the start of the body.
    func keep(_ bytes: UnsafeRawBufferPointer) {
        guard var kept = response, kept.body.count < Self.responseLimit else { return }
        kept.body.append(contentsOf: bytes.prefix(Self.responseLimit - kept.body.count))
        response = kept
    }
}
