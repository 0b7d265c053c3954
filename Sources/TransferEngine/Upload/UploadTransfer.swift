/// One attempt of an upload: owns the easy handle, streams the body from disk through the
/// read callback, and keeps the server's answer. Thread: the loop thread.
final class UploadTransfer: Transfer {
    let jobID: JobID
    let attempt: Int
    let easy: CurlEasy
    private var body: any UploadBody
    /// The body as it was before its first byte was read: what a rewind goes back to.
    private let unreadBody: any UploadBody
    /// When the attempt's `--max-time` runs out.
    private let deadline: AttemptDeadline?
    let contentLength: Int64
    private(set) var sent: Int64 = 0
    private(set) var response: UploadResponse?
    private var parser = ResponseHeadParser(keepingLines: true)
    private var verdict: AttemptOutcome?
    private var stopped = false

    /// Paces the transfer against its own and the global upload limit.
    let pacer: Pacer
    let stallSeconds: Int
    private(set) var retryAfter: Int64?
    private(set) var lastActivity = Monotonic.now
    var isThrottled: Bool { pacer.isWaiting }

    init(jobID: JobID, attempt: Int, url: String, method: String, headers: [String], tls: TLSOptions,
         network: NetworkOptions = NetworkOptions(), body: any UploadBody, pacer: Pacer,
         stallSeconds: Int) throws(TransferError) {
        self.pacer = pacer
        self.stallSeconds = stallSeconds
        self.jobID = jobID
        self.attempt = attempt
        self.body = body
        unreadBody = body
        deadline = AttemptDeadline(maxTime: network.maxTime)
        contentLength = body.contentLength
        var request = CurlEasy.Request(url: url)
        request.headers = headers
        request.tls = tls
        request.network = network
        request.timeoutMilliseconds = deadline?.remainingMilliseconds()
        let ownType = headers.contains { $0.lowercased().hasPrefix("content-type:") }
        if let contentType = body.contentType, !ownType { request.headers.append("Content-Type: \(contentType)") }
        // A redirect would need the body again from the start: report it instead.
        request.followRedirects = false
        request.lowSpeedSeconds = stallSeconds
        request.body = CurlEasy.Body(method: method, length: contentLength)
        do {
            easy = try CurlEasy(request)
        } catch {
            throw .network("cannot set up the request: \(error)")
        }
        easy.onRead = { [unowned self] buffer in read(buffer) }
        // An authentication round trip (--user, --anyauth) sends the body again from its start.
        easy.onSeek = { [unowned self] offset in
            guard offset == 0 else { return false }
            self.body = unreadBody
            sent = 0
            return true
        }
        easy.onHeader = { [unowned self] line in header(line) }
        easy.onWrite = { [unowned self] bytes in
            response?.append(bytes)
            lastActivity = Monotonic.now
            return .consumed
        }
        pacer.onAllowed = { [unowned self] in
            if !stopped { easy.unpause() }
        }
    }

    var status: Int? { response?.status }
    var transferred: Int64 { sent }
    var direction: TransferDirection { .up }
    var progress: (done: Int64, total: Int64?) { (sent, contentLength) }
    func tick() {}
    /// The whole request reached the connection: the server may have acted on it.
    var requestSent: Bool { easy.sentWholeRequest(bodyLength: contentLength) }
    var partialFile: PartialFile? { nil }
    var redirectStep: RedirectStep? { nil }

    func report(_ outcome: AttemptOutcome) -> AttemptReport {
        var report = baseReport(outcome)
        report.requestSent = requestSent
        report.response = response
        return report
    }

    func stop() {
        stopped = true
        pacer.stop()
    }

    func whenIdle(_ work: @escaping () -> Void) { work() }

    func outcome(_ code: CurlCode) -> AttemptOutcome {
        if let verdict { return verdict }
        if let deadline, deadline.expired(code) { return .failed(.timedOut(seconds: deadline.seconds)) }
        guard code.category == .ok else {
            return .failed(TransferError(code, detail: easy.errorDetail, socketError: easy.socketError, moving: sent > 0, stallSeconds: stallSeconds))
        }
        guard let status = response?.status else { return .failed(.network("no response")) }
        return (200..<300).contains(status) ? .completed : .failed(.httpStatus(status))
    }

    private func read(_ buffer: UnsafeMutableRawBufferPointer) -> CurlEasy.ReadAction {
        guard !stopped else { return .abort }
        guard pacer.admit() else { return .pause }
        do {
            let room = min(buffer.count, pacer.allowance(buffer.count))
            let count = try body.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room]))
            pacer.moved(count)
            sent += Int64(count)
            if count > 0 { lastActivity = Monotonic.now }
            return .bytes(count)
        } catch {
            verdict = .failed(error)
            return .abort
        }
    }

    private func header(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bytes.starts(with: "HTTP/".utf8) { response = nil }
        guard let head = parser.consume(bytes) else { return true }
        if head.status >= 200 { response = UploadResponse(status: head.status, headers: head.lines) }
        retryAfter = head.fields["retry-after"].flatMap { RetryAfter.milliseconds($0) }
        return true
    }
}
