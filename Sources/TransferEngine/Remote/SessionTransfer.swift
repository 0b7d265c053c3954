/// One attempt of a resumable upload (tus, S3): the requests its protocol's state machine asks
/// for — one after another, or several at once (S3 parts in parallel) — each on an easy handle
/// of its own (a `SessionLane`), the file's bytes streamed from disk through the read callback
/// and one pacer. The scheduler drives it (`Scheduler+Sessions`): it hands each request to the
/// engine and each durable step to the store. Thread: the loop thread.
final class SessionTransfer: Transfer {
    let jobID: JobID
    let attempt: Int
    private(set) var machine: any SessionMachine
    /// The file, open and checked (read on the loop thread and, for checksums, on file threads).
    let reader: SourceReader
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
    /// The requests in flight, by their handle.
    private var lanes: [ObjectIdentifier: SessionLane] = [:]
    /// The most recent request's handle (its timings are the attempt's metrics).
    private(set) var easy: CurlEasy
    /// Body bytes sent by this attempt's finished requests.
    private var sentBefore: Int64 = 0
    private var stopped = false
    /// A durable step is on its way to the store; answers that arrive meanwhile wait in `held`.
    var recording = false
    var held: [(SessionResponse, SessionRequest)] = []

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
        let lane = try SessionLane(first, headers: headers, tls: tls, network: network, signing: signing, deadline: deadline,
                                   stallSeconds: stallSeconds)
        easy = lane.easy
        adopt(lane)
        pacer.onAllowed = { [unowned self] in
            guard !stopped else { return }
            for lane in lanes.values { lane.easy.unpause() }
        }
    }

    /// Every handle in flight.
    var easies: [CurlEasy] { lanes.values.map(\.easy) }

    /// Makes `request` a request in flight (its handle not yet in the engine); returns its handle.
    func begin(_ request: SessionRequest) throws(TransferError) -> CurlEasy {
        let lane = try SessionLane(request, headers: jobHeaders, tls: tls, network: network, signing: signing,
                                   deadline: deadline, stallSeconds: stallSeconds)
        easy = lane.easy
        adopt(lane)
        return lane.easy
    }

    /// Another request the machine can send beside those in flight.
    func more() -> SessionRequest? { stopped ? nil : machine.more() }

    /// Over: nothing more is sent.
    var isStopped: Bool { stopped }

    /// The request of `handle` ended with `code`: what the machine asks for next.
    func requestEnded(_ handle: CurlEasy, _ code: CurlCode) -> SessionAction {
        guard let lane = lanes.removeValue(forKey: ObjectIdentifier(handle)) else { return .idle }
        sentBefore += lane.sent
        if let failure = lane.readFailure { return .fail(failure) }
        if let deadline, deadline.expired(code) { return .fail(.timedOut(seconds: deadline.seconds)) }
        guard code.category == .ok else {
            return .fail(TransferError(code, detail: handle.errorDetail, socketError: handle.socketError,
                                       moving: lane.sent > 0 || sentBefore > 0, stallSeconds: stallSeconds))
        }
        guard let response = lane.response else { return .fail(.network("no response")) }
        lastResponse = response
        if recording {
            held.append((response, lane.request))
            return .idle
        }
        return machine.answered(response, to: lane.request)
    }

    /// The last `record` is durable: the machine's next step, then any answer that waited.
    func recorded() -> SessionAction {
        recording = false
        return machine.recorded()
    }

    /// An answer that arrived while a record was on its way, now for the machine.
    func nextHeldAnswer() -> SessionAction? {
        guard !recording, !held.isEmpty else { return nil }
        let (response, request) = held.removeFirst()
        return machine.answered(response, to: request)
    }

    var status: Int? { lastResponse?.status ?? lanes.values.first?.response?.status }
    var transferred: Int64 { sentBefore + lanes.values.reduce(0) { $0 + $1.sent } }
    var direction: TransferDirection { .up }
    var progress: (done: Int64, total: Int64?) {
        let inFlight = lanes.values.reduce(Int64(0)) { $0 + ($1.sendsFile ? $1.sent : 0) }
        return (min(reader.source.size, machine.serverBytes + inFlight), reader.source.size)
    }
    var partialFile: PartialFile? { nil }
    var redirectStep: RedirectStep? { nil }
    var isThrottled: Bool { pacer.isWaiting }
    func tick() {}

    func stop() {
        stopped = true
        pacer.stop()
    }

    func whenIdle(_ work: @escaping () -> Void) { work() }

    /// The attempt's end as the engine reports it (each request's code goes to `requestEnded`).
    func outcome(_ code: CurlCode) -> AttemptOutcome { .completed }

    func report(_ outcome: AttemptOutcome) -> AttemptReport {
        var report = baseReport(outcome)
        report.serverBytes = machine.serverBytes
        if let last = lastResponse {
            report.response = UploadResponse(status: last.status, headers: [], body: last.body)
        }
        return report
    }

    // MARK: A request's callbacks

    private func adopt(_ lane: SessionLane) {
        let id = ObjectIdentifier(lane.easy)
        lanes[id] = lane
        lane.easy.onRead = { [unowned self, unowned lane] buffer in read(buffer, lane) }
        lane.easy.onSeek = { [unowned lane] offset in
            guard offset == 0 else { return false }
            lane.rewind()
            return true
        }
        lane.easy.onHeader = { [unowned self, unowned lane] line in
            if let head = lane.header(line) {
                retryAfter = head.fields["retry-after"].flatMap { RetryAfter.milliseconds($0) }
            }
            lastActivity = Monotonic.now
            return true
        }
        lane.easy.onWrite = { [unowned self, unowned lane] bytes in
            lane.keep(bytes)
            lastActivity = Monotonic.now
            return .consumed
        }
    }

    private func read(_ buffer: UnsafeMutableRawBufferPointer, _ lane: SessionLane) -> CurlEasy.ReadAction {
        guard !stopped else { return .abort }
        if lane.sendsFile {
            guard pacer.admit() else { return .pause }
        }
        do {
            let room = lane.sendsFile ? min(buffer.count, pacer.allowance(buffer.count)) : buffer.count
            let count = try lane.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room]), from: reader)
            if lane.sendsFile {
                pacer.moved(count)
                if count > 0 { lastActivity = Monotonic.now }
            }
            return .bytes(count)
        } catch {
            lane.readFailure = error
            return .abort
        }
    }
}

extension Range where Bound == Int64 {
    var count64: Int64 { upperBound - lowerBound }
}
