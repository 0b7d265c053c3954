/// One attempt of a download: owns the easy handle, decides from the response head what to do
/// with the body, and appends it to the partial file. Thread: the loop thread.
final class DownloadTransfer: Transfer {
    enum Phase: Equatable {
        case awaitingHead
        case receiving
        /// A 200 replaced a resumed entity: writes wait until the old bytes are gone.
        case awaitingTruncation
        /// A download into a directory: writes wait until the name the answer gives is recorded.
        case awaitingName
        case stopped
    }

    static let checkpointBytes: Int64 = 4 << 20
    /// Body bytes are gathered up to this many before they are written: libcurl hands them over
    /// as they arrive (a 64 KiB body in some twenty pieces), and each write is a system call.
    static let writeBytes = 256 << 10
    /// Writeback of written bytes starts every this many: the disk writes while the network
    /// reads, and a checkpoint's or the last fdatasync finds little left to do (the kernel's own
    /// writeback would wait for gigabytes to be dirty).
    static let writebackBytes: Int64 = 8 << 20

    let jobID: JobID
    let attempt: Int
    let easy: CurlEasy
    let file: PartialFile
    let rangeStart: Int64
    /// The request's URL and headers, and how many more redirects this attempt may follow.
    let url: String
    let headers: [String]
    let redirectsLeft: Int
    /// Headers secret whatever their names, kept from the job's origin at a redirect elsewhere.
    let secretNames: Set<String>
    /// libcurl follows this request's redirects itself (it carries no secret).
    private let libcurlFollows: Bool
    /// The request asked for a compressed body (`--compressed` at byte 0): libcurl decodes it.
    private let acceptsEncoding: Bool
    /// The request carries credentials libcurl offers once a server asks (a 401 with a
    /// challenge); the challenges seen so far.
    private let credentials: Bool
    private var challenges = 0
    /// When the attempt's `--max-time` runs out.
    let deadline: AttemptDeadline?
    /// The entity as known now; `bytesDurable` is what the store has recorded.
    private(set) var resume: ResumeState
    /// Bytes received into the partial file (the last `pending.count` of them not written yet).
    private(set) var offset: Int64
    /// Received bytes not yet written: written before a checkpoint, a stop or the attempt's end.
    private var pending: [UInt8] = []
    /// Written bytes from here on have not been handed to writeback yet.
    private var writebackFrom: Int64
    /// Body bytes received in this attempt.
    private(set) var received: Int64 = 0
    private(set) var phase = Phase.awaitingHead
    private(set) var status: Int?
    /// An outcome decided by the transfer itself, which outranks libcurl's result code.
    private(set) var verdict: AttemptOutcome?
    private var parser = ResponseHeadParser(keepingOnly: ResponseHead.downloadFields)
    private var truncateBeforeWriting = false
    /// The last response head was a challenge left to libcurl: if no other follows, libcurl
    /// did not answer it (no credentials for that host) and it is the answer.
    private var challengePending = false

    /// A checkpoint or truncation is on its way to disk; the next one waits.
    var durabilityInFlight = false
    private var whenDurable: [() -> Void] = []

    /// Asks the owner to empty the partial file and record that (then call `truncated()`).
    var onNeedsTruncation: (DownloadTransfer) -> Void = { _ in }
    /// Tells the owner enough new bytes were written to make them durable.
    var onCheckpointDue: (DownloadTransfer) -> Void = { _ in }
    /// Asks the owner to start writeback of this range of the file (off the loop thread).
    var onWritebackDue: (PartialFile, Range<Int64>) -> Void = { _, _ in }
    /// A download into a directory without a name yet: the answer names it (`onNameChosen`; the
    /// owner calls `named()` once that is recorded, or `namingFailed`).
    var namesFile = false
    var onNameChosen: (DownloadTransfer, String) -> Void = { _, _ in }

    /// Paces the transfer against its own and the global download limit.
    let pacer: Pacer
    /// An attempt that moves no byte for this long is aborted (and retried).
    let stallSeconds: Int
    /// The file may not grow past this many bytes (`--max-filesize`): an endless body must not fill the disk.
    let maxFilesize: Int64?
    private(set) var retryAfter: Int64?
    /// The Location of the last redirect: what was refused if libcurl would not follow it.
    private(set) var redirect: String?
    private(set) var lastActivity = Monotonic.now
    var isThrottled: Bool { pacer.isWaiting || phase == .awaitingTruncation || phase == .awaitingName }

    /// A request for `url` with `headers`. `redirects` says whether libcurl may follow its
    /// redirects; when not, a redirect ends it with `AttemptOutcome.redirect`.
    init(jobID: JobID, attempt: Int, url: String, headers: [String], tls: TLSOptions, network: NetworkOptions = NetworkOptions(),
         deadline: AttemptDeadline? = nil, redirects: RedirectGuard, redirectsLeft: Int = RedirectGuard.maxRedirects,
         pacer: Pacer, stallSeconds: Int, maxFilesize: Int64?, signing: AWSSigning? = nil, file: PartialFile,
         resume: ResumeState) throws(TransferError) {
        self.url = url
        self.headers = headers
        self.redirectsLeft = redirectsLeft
        self.pacer = pacer
        self.stallSeconds = stallSeconds
        self.maxFilesize = maxFilesize
        self.jobID = jobID
        self.attempt = attempt
        self.file = file
        self.resume = resume
        rangeStart = resume.bytesDurable
        offset = resume.bytesDurable
        writebackFrom = resume.bytesDurable
        self.deadline = deadline
        var request = CurlEasy.Request(url: url)
        request.headers = headers
        request.tls = tls
        request.network = network
        // At a step of a redirect transferd follows, the user's credentials go only to the job's
        // origin, as the secret headers (libcurl's own following checks the host itself).
        request.sendsCredentials = redirects.sendsSecrets(to: url)
        credentials = (request.sendsCredentials && network.user != nil) || network.netrcFile != nil
        request.timeoutMilliseconds = deadline?.remainingMilliseconds()
        // An S3 object: signed with the daemon's AWS credentials (SigV4).
        request.awsSigning = signing
        secretNames = redirects.secretNames
        libcurlFollows = redirects.libcurlMayFollow(headers)
        request.followRedirects = libcurlFollows
        request.maxRedirects = redirectsLeft
        request.redirectOrigin = redirects.jobURL
        request.lowSpeedSeconds = stallSeconds
        // Under a limit, smaller network chunks keep the pace smooth (each chunk is paid for whole).
        request.receiveBufferSize = pacer.chunkLimit(request.receiveBufferSize)
        if rangeStart > 0, let validator = resume.validators.ifRange {
            request.rangeStart = rangeStart
            request.headers.append("If-Range: \(validator)")
        }
        // A compressed body is asked for only from byte 0: a range counts the server's encoded
        // bytes, the partial file holds decoded ones (`ResumeState.decoded`).
        acceptsEncoding = network.compressed && request.rangeStart == 0
        request.acceptEncoding = acceptsEncoding
        do {
            easy = try CurlEasy(request)
        } catch {
            throw .network("cannot set up the request: \(error)")
        }
        easy.onHeader = { [unowned self] line in header(line) }
        easy.onWrite = { [unowned self] bytes in write(bytes) }
        pacer.onAllowed = { [unowned self] in
            if phase == .receiving { easy.unpause() }
        }
    }

    /// The state to record once the bytes written so far are synced.
    var checkpoint: ResumeState {
        var state = resume
        state.bytesDurable = offset - Int64(pending.count)
        return state
    }

    var transferred: Int64 { received }
    var direction: TransferDirection { .down }
    var partialFile: PartialFile? { file }
    var redirectStep: RedirectStep? {
        RedirectStep(headers: headers, secretNames: secretNames, redirectsLeft: redirectsLeft, file: file, resume: checkpoint,
                     deadline: deadline)
    }

    /// What it keeps is the checkpoint, identified by the file as transferd leaves it.
    func report(_ outcome: AttemptOutcome) -> AttemptReport {
        var report = baseReport(outcome)
        report.resume = checkpoint.identified(by: file, writing: false)
        return report
    }
    var progress: (done: Int64, total: Int64?) { (offset, resume.bytesTotal) }

    /// Makes the bytes received since the last checkpoint durable, at least once a second.
    func tick() {
        guard needsCheckpoint else { return }
        do {
            try flush()
        } catch {
            // The attempt ends with the error: libcurl's next write (a paused transfer is woken
            // for it) is refused.
            verdict = .failed(error)
            phase = .stopped
            easy.unpause()
            return
        }
        onCheckpointDue(self)
    }

    var needsCheckpoint: Bool { !durabilityInFlight && offset > resume.bytesDurable && phase == .receiving }

    /// The store recorded `state`: its bytes are durable.
    func recorded(_ state: ResumeState) {
        resume.bytesDurable = state.bytesDurable
        finishDurability()
    }

    /// The partial file was emptied and the new entity recorded: writing continues at byte 0.
    func truncated(_ state: ResumeState) {
        resume = state
        offset = 0
        writebackFrom = 0
        truncateBeforeWriting = false
        finishDurability()
        phase = .receiving
        easy.unpause()
    }

    /// The name the answer gave is recorded: the body may be written.
    func named() {
        guard phase == .awaitingName else { return }
        phase = .receiving
        easy.unpause()
    }

    /// The name the answer gave cannot be used (taken, or not recorded): the attempt ends with `error`.
    func namingFailed(_ error: TransferError) {
        verdict = .failed(error)
        phase = .stopped
        easy.unpause()
    }

    /// A checkpoint or truncation could not be made durable; the bytes stay unrecorded.
    func durabilityFailed() { finishDurability() }

    /// Runs `work` once no checkpoint is on its way to disk.
    func whenIdle(_ work: @escaping () -> Void) {
        if durabilityInFlight { whenDurable.append(work) } else { work() }
    }

    /// Stops taking bytes; those received are written, to be kept.
    func stop() {
        phase = .stopped
        pacer.stop()
        try? flush()
    }

    /// The attempt's result, given libcurl's code for it. Every byte received is written first —
    /// except the last ones of a complete body, which the thread that finishes the file writes
    /// before it syncs it (`PartialFile.writeLater`): a small file's whole body, off the loop.
    func outcome(_ code: CurlCode) -> AttemptOutcome {
        let outcome = decide(code)
        if case .completed = outcome, handOverPending() { return outcome }
        do {
            try flush()
        } catch {
            return .failed(error)
        }
        return outcome
    }

    private func decide(_ code: CurlCode) -> AttemptOutcome {
        if let verdict { return verdict }
        if let deadline, deadline.expired(code) { return .failed(.timedOut(seconds: deadline.seconds)) }
        // A challenge libcurl did not answer (wrong credentials, or another host's) is the end.
        if phase == .awaitingHead, challengePending { return .failed(.httpStatus(401)) }
        guard code.category == .ok else {
            return .failed(TransferError(code, detail: easy.errorDetail, socketError: easy.socketError, moving: phase == .receiving,
                                         stallSeconds: stallSeconds, redirect: redirect))
        }
        guard phase == .receiving else { return .failed(.network("the response ended before its body")) }
        if let total = resume.bytesTotal, offset != total {
            return .failed(.network("received \(offset) of \(total) bytes"))
        }
        return .completed
    }

    private func finishDurability() {
        durabilityInFlight = false
        let works = whenDurable
        whenDurable.removeAll()
        for work in works { work() }
    }

    private func header(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let head = parser.consume(bytes) else { return true }
        retryAfter = head.fields["retry-after"].flatMap { RetryAfter.milliseconds($0) }
        // The first challenge is libcurl's to answer; a second means the credentials failed.
        let authenticating = credentials && challenges == 0
        challengePending = false
        switch DownloadDecision.decide(head, offset: offset, resume: resume, followingRedirects: libcurlFollows,
                                       authenticating: authenticating) {
        case .ignore:
            if (300..<400).contains(head.status) { redirect = head.location }
            if head.status == 401 {
                challenges += 1
                challengePending = true
            }
            return true
        case .redirect:
            status = head.status
            if let location = head.location, let target = CurlURL.resolve(location, against: url) {
                verdict = redirectsLeft > 0 ? .redirect(to: target)
                    : .failed(.network("stopped after \(RedirectGuard.maxRedirects) redirects"))
            } else {
                verdict = .failed(.httpStatus(head.status))
            }
            return false
        case .append(let total):
            status = head.status
            if refusesSize(total) { return false }
            resume.bytesTotal = total
            receive(head)
            return true
        case .writeFromStart(let validators, var total):
            status = head.status
            // libcurl decodes a compressed body it asked for: the length is the encoded one.
            let decoded = acceptsEncoding && head.isContentEncoded
            if decoded { total = nil }
            if refusesSize(total) { return false }
            resume.validators = validators
            resume.bytesTotal = total
            resume.decoded = decoded
            truncateBeforeWriting = offset > 0
            receive(head)
            return true
        case .complete:
            status = head.status
            verdict = .completed
            phase = .receiving
            return false
        case .startOver(let reason):
            status = head.status
            verdict = .startOver(reason: reason)
            return false
        case .fail(let error):
            status = head.status
            verdict = .failed(error)
            return false
        }
    }

    /// The body follows: written at once, or once the name the answer gives is recorded.
    private func receive(_ head: ResponseHead) {
        guard namesFile else {
            phase = .receiving
            return
        }
        namesFile = false
        phase = .awaitingName
        onNameChosen(self, ServerFileName.choose(contentDisposition: head.fields["content-disposition"],
                                                 url: easy.effectiveURL ?? url))
    }

    /// An announced size past `maxFilesize` ends the attempt (its verdict: `too_large`) before a
    /// byte of its body is written.
    private func refusesSize(_ total: Int64?) -> Bool {
        guard let maxFilesize, let total, total > maxFilesize else { return false }
        verdict = .failed(.tooLarge(limit: maxFilesize))
        return true
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> CurlEasy.WriteAction {
        switch phase {
        case .receiving:
            break
        case .awaitingTruncation, .awaitingName:
            return .pause
        case .awaitingHead, .stopped:
            return .abort
        }
        if truncateBeforeWriting {
            phase = .awaitingTruncation
            whenIdle { [unowned self] in onNeedsTruncation(self) }
            return .pause
        }
        guard pacer.admit() else { return .pause }
        if let maxFilesize, offset + Int64(bytes.count) > maxFilesize {
            verdict = .failed(.tooLarge(limit: maxFilesize))
            return .abort
        }
        do {
            try gather(bytes)
            offset += Int64(bytes.count)
            if offset - resume.bytesDurable >= Self.checkpointBytes, !durabilityInFlight {
                try flush()
                onCheckpointDue(self)
            }
        } catch {
            verdict = .failed(error)
            return .abort
        }
        received += Int64(bytes.count)
        lastActivity = Monotonic.now
        pacer.moved(bytes.count)
        return .consumed
    }

    /// Keeps `bytes` (received at `offset`) with those pending, writing first when they would
    /// not fit; a piece as large as the buffer is written as it is.
    private func gather(_ bytes: UnsafeRawBufferPointer) throws(TransferError) {
        if pending.count + bytes.count > Self.writeBytes { try flush() }
        if bytes.count >= Self.writeBytes {
            try file.write(bytes, at: offset)
            wrote(upTo: offset + Int64(bytes.count))
        } else {
            if pending.capacity == 0 {
                // A small body needs no more than its own size.
                let remaining = (resume.bytesTotal ?? Int64(Self.writeBytes)) - offset
                pending.reserveCapacity(Int(min(Int64(Self.writeBytes), max(remaining, Int64(bytes.count)))))
            }
            pending.append(contentsOf: bytes)
        }
    }

    /// Hands the pending bytes to the file to be written later; false when it keeps none (the
    /// bytes it keeps for all files are at their limit).
    private func handOverPending() -> Bool {
        guard !pending.isEmpty else { return true }
        guard file.writeLater(pending, at: offset - Int64(pending.count)) else { return false }
        pending = []
        return true
    }

    /// Writes the pending bytes to the file, where they end at `offset`.
    private func flush() throws(TransferError) {
        guard !pending.isEmpty else { return }
        let start = offset - Int64(pending.count)
        let result = pending.withUnsafeBytes { bytes in Result { () throws(TransferError) in try file.write(bytes, at: start) } }
        try result.get()
        pending.removeAll(keepingCapacity: true)
        wrote(upTo: offset)
    }

    /// The file holds every byte up to `end`: writeback starts once enough have gathered.
    private func wrote(upTo end: Int64) {
        if end < writebackFrom { writebackFrom = end }  // truncated meanwhile
        guard end - writebackFrom >= Self.writebackBytes else { return }
        onWritebackDue(file, writebackFrom..<end)
        writebackFrom = end
    }
}
