/// One attempt of a resumable upload (tus, S3): the requests its protocol's state machine asks
/// for, one after another, each on an easy handle of its own, the file's bytes streamed from
/// disk through the read callback. The scheduler drives it (`Scheduler+Sessions`): it hands
/// each request to the engine and each durable step to the store. Thread: the loop thread.
final class SessionTransfer: Transfer {
    let jobID: JobID
    let attempt: Int
    /// The current request's handle (replaced by each request).
    private(set) var easy: CurlEasy
    private(set) var machine: any SessionMachine
    private let reader: SourceReader
    /// What every request of the job carries: its headers, TLS and network options.
    private let jobHeaders: [String]
    private let tls: TLSOptions
    private let network: NetworkOptions
    private let signing: AWSSigning?
    private let deadline: AttemptDeadline?
    let pacer: Pacer
    let stallSeconds: Int
    private(set) var retryAfter: Int64?
    private(set) var lastActivity = Monotonic.now
    private(set) var lastResponse: SessionResponse?
    /// Body bytes sent by this attempt's requests, and by the current one.
    private var sentBefore: Int64 = 0
    private var sentNow: Int64 = 0
    /// The current request's body, as far as it is read.
    private var body = SessionRequest.Body.none
    private var bodyOffset: Int64 = 0
    private var parser = ResponseHeadParser()
    private var response: SessionResponse?
    private var readFailure: TransferError?
    private var stopped = false
    /// A durable step is on its way to the store.
    var recording = false

    /// A response body is kept up to this size (an S3 part listing of 1,000 parts fits).
    static let responseLimit = 1 << 20

    init(jobID: JobID, attempt: Int, machine: any SessionMachine, first: SessionRequest, reader: SourceReader,
         headers: [String], tls: TLSOptions, network: NetworkOptions, signing: AWSSigning?, pacer: Pacer,
         stallSeconds: Int) throws(TransferError) {
        self.jobID = jobID
        self.attempt = attempt
        self.machine = machine
        self.reader = reader
        jobHeaders = headers
        self.tls = tls
        self.network = network
        self.signing = signing
        self.pacer = pacer
        self.stallSeconds = stallSeconds
        deadline = AttemptDeadline(maxTime: network.maxTime)
        easy = try Self.handle(for: first, headers: headers, tls: tls, network: network, signing: signing,
                               deadline: deadline, stallSeconds: stallSeconds)
        adopt(first)
        pacer.onAllowed = { [unowned self] in
            if !stopped { easy.unpause() }
        }
    }

    /// Makes `request` the current one (its handle not yet in the engine).
    func begin(_ request: SessionRequest) throws(TransferError) {
        easy = try Self.handle(for: request, headers: jobHeaders, tls: tls, network: network, signing: signing,
                               deadline: deadline, stallSeconds: stallSeconds)
        adopt(request)
    }

    /// The current request ended with `code`: what the machine asks for next.
    func requestEnded(_ code: CurlCode) -> SessionAction {
        sentBefore += sentNow
        sentNow = 0
        if let readFailure { return .fail(readFailure) }
        if let deadline, deadline.expired(code) { return .fail(.timedOut(seconds: deadline.seconds)) }
        guard code.category == .ok else {
            return .fail(TransferError(code, detail: easy.errorDetail, socketError: easy.socketError, moving: sentBefore > 0,
                                       stallSeconds: stallSeconds))
        }
        guard let response else { return .fail(.network("no response")) }
        lastResponse = response
        return machine.answered(response)
    }

    /// The last `record` is durable.
    func recorded() -> SessionAction {
        recording = false
        return machine.recorded()
    }

    var status: Int? { response?.status ?? lastResponse?.status }
    var transferred: Int64 { sentBefore + sentNow }
    var direction: TransferDirection { .up }
    var progress: (done: Int64, total: Int64?) {
        let inFlight = if case .file = body { sentNow } else { Int64(0) }
        return (min(reader.source.size, machine.serverBytes + inFlight), reader.source.size)
    }
    var keptBytes: Int64 { machine.serverBytes }
    var partialFile: PartialFile? { nil }
    var redirectStep: RedirectStep? { nil }
    var isThrottled: Bool { pacer.isWaiting }
    func tick() {}

    func stop() {
        stopped = true
        pacer.stop()
    }

    func whenIdle(_ work: @escaping () -> Void) { work() }

    /// The attempt's end as the engine reports it (its last request's `code` is in `requestEnded`).
    func outcome(_ code: CurlCode) -> AttemptOutcome { .completed }

    func report(_ outcome: AttemptOutcome) -> AttemptReport {
        var report = baseReport(outcome)
        report.serverBytes = machine.serverBytes
        if let last = lastResponse {
            report.response = UploadResponse(status: last.status, headers: [], body: last.body)
        }
        return report
    }

    // MARK: The current request

    private func adopt(_ request: SessionRequest) {
        body = request.body
        bodyOffset = 0
        parser = ResponseHeadParser()
        response = nil
        readFailure = nil
        easy.onRead = { [unowned self] buffer in read(buffer) }
        easy.onSeek = { [unowned self] offset in
            guard offset == 0 else { return false }
            bodyOffset = 0
            sentNow = 0
            return true
        }
        easy.onHeader = { [unowned self] line in header(line) }
        easy.onWrite = { [unowned self] bytes in
            if var response, response.body.count < Self.responseLimit {
                response.body.append(contentsOf: bytes.prefix(Self.responseLimit - response.body.count))
                self.response = response
            }
            lastActivity = Monotonic.now
            return .consumed
        }
    }

    private static func handle(for request: SessionRequest, headers: [String], tls: TLSOptions, network: NetworkOptions,
                               signing: AWSSigning?, deadline: AttemptDeadline?, stallSeconds: Int) throws(TransferError) -> CurlEasy {
        var curl = CurlEasy.Request(url: request.url)
        curl.headers = request.headers + headers
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
            return try CurlEasy(curl)
        } catch {
            throw .network("cannot set up the request: \(error)")
        }
    }

    private func read(_ buffer: UnsafeMutableRawBufferPointer) -> CurlEasy.ReadAction {
        guard !stopped else { return .abort }
        switch body {
        case .none:
            return .bytes(0)
        case .bytes(let bytes):
            let count = min(buffer.count, bytes.count - Int(bodyOffset))
            guard count > 0 else { return .bytes(0) }
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(bodyOffset)..<Int(bodyOffset) + count]))
            }
            bodyOffset += Int64(count)
            return .bytes(count)
        case .file(let range):
            guard pacer.admit() else { return .pause }
            let left = range.count64 - bodyOffset
            guard left > 0 else { return .bytes(0) }
            let room = Int(min(Int64(min(buffer.count, pacer.allowance(buffer.count))), left))
            do {
                let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room]),
                                            at: range.lowerBound + bodyOffset)
                pacer.moved(count)
                bodyOffset += Int64(count)
                sentNow = bodyOffset
                if count > 0 { lastActivity = Monotonic.now }
                if range.upperBound == reader.source.size, bodyOffset == range.count64 { try reader.verify() }
                return .bytes(count)
            } catch {
                readFailure = error
                return .abort
            }
        }
    }

    private func header(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let head = parser.consume(bytes) else { return true }
        if head.status >= 200 { response = SessionResponse(status: head.status, fields: head.fields) }
        retryAfter = head.fields["retry-after"].flatMap { RetryAfter.milliseconds($0) }
        lastActivity = Monotonic.now
        return true
    }
}

extension Range where Bound == Int64 {
    var count64: Int64 { upperBound - lowerBound }
}
