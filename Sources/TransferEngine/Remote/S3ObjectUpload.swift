/// An S3 upload's attempt: a file up to `S3PartPlan.singlePutThreshold` in one signed PUT;
/// a larger one as a multipart upload — CreateMultipartUpload, its UploadId recorded before any
/// part is sent; parts PUT from their ranges of the file, `lanes` at a time (`more()`), each
/// recorded with its ETag as S3 acknowledges it; CompleteMultipartUpload naming them all. A recorded upload continues from
/// what S3 lists (ListParts), never from the local record alone; an upload S3 no longer has
/// (NoSuchUpload) is forgotten and a new one created — unless it was this attempt's Complete
/// whose answer was lost, which a HEAD of the object tells. Thread: a value, driven on the loop thread.
struct S3ObjectUpload: SessionMachine {
    let location: S3Location
    let endpoint: S3Endpoint
    let size: Int64
    let contentType: String
    private(set) var plan: S3PartPlan
    /// Parts sent at once (`--parts-in-flight`).
    let lanes: Int
    private(set) var session: UploadSession?
    /// The parts S3 holds, by number.
    private var parts: [Int: UploadedPart] = [:]
    /// The parts being sent, by number: their sizes.
    private var inFlight: [Int: Int64] = [:]
    private var state = State.idle
    private var listed: [UploadedPart] = []
    /// Where the part list's last page ended: each next page must start past it.
    private var listedUpTo = 0
    /// The parts recorded before this attempt, by number: what ListParts does not say of
    /// them (SeaweedFS lists no checksums) is taken from here.
    private let recordedParts: [Int: UploadedPart]
    private var restarts = 0

    private enum State: Equatable {
        case idle, putting, creating, recordingSession, recordingParts, forgetting, recordingPart, completing, verifying, done
        case listing, sending
    }

    init(location: S3Location, endpoint: S3Endpoint, size: Int64, contentType: String, partSize: Int64?,
         lanes: Int = 1, session: UploadSession?, parts: [UploadedPart]) throws(S3PartPlanError) {
        self.lanes = max(1, lanes)
        self.location = location
        self.endpoint = endpoint
        self.size = size
        self.contentType = contentType
        let recorded = session?.uploadID == nil ? nil : session
        plan = try S3PartPlan(fileSize: size, requestedPartSize: recorded?.partSize ?? partSize)
        self.session = recorded
        if recorded != nil { for part in parts { self.parts[part.number] = part } }
        recordedParts = self.parts
    }

    var serverBytes: Int64 {
        if state == .done { return size }
        return parts.values.reduce(0) { $0 + $1.size }
    }

    mutating func start() -> SessionAction {
        if session != nil { return list(after: nil) }
        guard S3PartPlan.fitsSinglePut(fileSize: size) else { return create() }
        state = .putting
        return .send(signed("PUT", location.objectURL(endpoint), headers: ["Content-Type: \(contentType)"], body: .file(0..<size)))
    }

    mutating func answered(_ response: SessionResponse, to request: SessionRequest) -> SessionAction {
        let ok = (200..<300).contains(response.status)
        // A part of an upload this attempt has since forgotten: nothing to learn from it.
        if request.tag > 0, state != .sending || inFlight[request.tag] == nil { return .idle }
        switch state {
        case .putting:
            guard ok else { return .fail(failure(response)) }
            state = .done
            return .complete
        case .creating:
            guard ok else { return .fail(failure(response)) }
            do {
                let id = try S3XML.uploadId(response.body)
                session = UploadSession(uploadID: id, partSize: plan.partSize)
            } catch {
                // Not retried: every try would leave another upload on the server that no one can abort.
                return .fail(.unusableAnswer("S3 answered CreateMultipartUpload without a readable UploadId "
                    + "(\(error.message)); an upload it may have made is left for its lifecycle rules"))
            }
            parts = [:]
            state = .recordingSession
            return .record(.session(session))
        case .listing:
            // Gone, but every part was held: an earlier Complete may have taken effect.
            if isGone(response) { return holdsEveryPart ? verify() : forget() }
            guard ok else { return .fail(failure(response)) }
            let page: S3PartsPage
            do { page = try S3XML.partsPage(response.body) } catch {
                return .fail(.protocolViolation("S3's part list cannot be read: \(error.message)"))
            }
            for part in page.parts where part.number > listedUpTo {
                if let kept = kept(part) { listed.append(kept) }
            }
            // Past the plan's last part there is nothing more to learn.
            if page.isTruncated, let marker = page.nextPartNumberMarker, marker < plan.partCount {
                // A page must move the list forward (botocore stops the same way): else it never ends.
                guard marker > listedUpTo else {
                    return .fail(.protocolViolation("S3's part list does not move forward (the next page "
                        + "starts after part \(marker) again)"))
                }
                listedUpTo = marker
                return list(after: marker)
            }
            parts = Dictionary(listed.map { ($0.number, $0) }, uniquingKeysWith: { $1 })
            listed = []
            listedUpTo = 0
            state = .recordingParts
            return .record(.parts(parts.values.sorted { $0.number < $1.number }, serverBytes: serverBytes))
        case .sending:
            let number = request.tag
            let size = inFlight.removeValue(forKey: number) ?? 0
            if isGone(response) { return forget() }
            guard ok else { return .fail(failure(response)) }
            guard let etag = response.fields["etag"], !etag.isEmpty else {
                return .fail(.protocolViolation("S3 acknowledged part \(number) without an ETag"))
            }
            let checksum = response.fields[SessionRequest.checksumHeader] ?? request.checksum
            let acknowledged = UploadedPart(number: number, etag: etag, size: size, checksum: checksum)
            parts[number] = acknowledged
            state = .recordingPart
            return .record(.part(acknowledged, serverBytes: serverBytes))
        case .completing:
            if isGone(response) { return verify() }
            guard ok else { return .fail(failure(response)) }
            // Complete may answer 200 and fail in its body.
            switch try? S3XML.completion(response.body) {
            case .completed?:
                state = .done
                return .complete
            case .failed(let error)?:
                if error.code == .noSuchUpload { return verify() }
                return .fail(S3Failure.transferError(status: response.status, error: error))
            case nil:
                return .fail(.protocolViolation("S3's answer to CompleteMultipartUpload cannot be read"))
            }
        case .verifying:
            // The object is there whole: this attempt's Complete took effect, its answer was lost.
            if ok, response.fields["content-length"].flatMap({ Int64($0) }) == size,
               response.fields["etag"]?.hasSuffix("-\(plan.partCount)\"") == true {
                state = .done
                return .complete
            }
            return forget()
        case .idle, .recordingSession, .recordingParts, .forgetting, .recordingPart, .done:
            return .fail(.protocolViolation("an answer the S3 upload did not ask for"))
        }
    }

    mutating func recorded() -> SessionAction {
        switch state {
        case .recordingSession, .recordingParts, .recordingPart: return next()
        case .forgetting: return create()
        default: return .fail(.protocolViolation("a record the S3 upload did not ask for"))
        }
    }

    /// A listed part to keep, with what Complete must name of it: its checksum as listed, or
    /// as recorded when it was acknowledged (the same ETag). A part of another size than the
    /// plan's, or one whose checksum neither says, is sent again: Complete names every part
    /// the same way (SeaweedFS refuses a list where some parts carry a checksum and others not).
    private func kept(_ part: S3Part) -> UploadedPart? {
        guard plan.range(ofPart: part.number)?.count64 == part.size else { return nil }
        let recorded = recordedParts[part.number].flatMap { $0.etag == part.etag ? $0.checksum : nil }
        guard let checksum = part.checksumCRC32 ?? recorded else { return nil }
        return UploadedPart(number: part.number, etag: part.etag, size: part.size, checksum: checksum)
    }

    /// Every part of the plan was acknowledged before this attempt.
    private var holdsEveryPart: Bool {
        plan.partCount > 0 && (1...plan.partCount).allSatisfy { recordedParts[$0] != nil }
    }

    /// AbortMultipartUpload of a recorded upload (a cancel).
    static func abort(_ session: UploadSession, location: S3Location, endpoint: S3Endpoint) -> SessionRequest? {
        session.uploadID.map { SessionRequest(method: "DELETE", url: location.objectURL(endpoint, .upload($0)), signed: true) }
    }

    // MARK: Steps

    private mutating func create() -> SessionAction {
        state = .creating
        // Each part carries its CRC32, which S3 checks; Complete names them all.
        return .send(signed("POST", location.objectURL(endpoint, .createMultipartUpload),
                            headers: ["Content-Type: \(contentType)", "x-amz-checksum-algorithm: CRC32"], body: .bytes([])))
    }

    private mutating func list(after marker: Int?) -> SessionAction {
        guard let id = session?.uploadID else { return create() }
        state = .listing
        return .send(signed("GET", location.objectURL(endpoint, .listParts(uploadId: id, partNumberMarker: marker))))
    }

    mutating func more() -> SessionRequest? {
        guard state == .sending else { return nil }
        return nextPart()
    }

    /// The next part S3 does not hold, the completion once it holds them all, or nothing while
    /// the last parts are in flight.
    private mutating func next() -> SessionAction {
        guard let id = session?.uploadID else { return create() }
        state = .sending
        if let part = nextPart() { return .send(part) }
        guard inFlight.isEmpty else { return .idle }
        let completed = (1...plan.partCount).compactMap { parts[$0] }
            .map { S3CompletedPart(number: $0.number, etag: $0.etag, checksumCRC32: $0.checksum) }
        guard let body = try? S3XML.completeMultipartUploadBody(completed) else {
            return .fail(.protocolViolation("cannot write the CompleteMultipartUpload request"))
        }
        state = .completing
        return .send(signed("POST", location.objectURL(endpoint, .upload(id)), headers: ["Content-Type: application/xml"],
                            body: .bytes(Array(body.utf8))))
    }

    /// A part neither held nor in flight, if a lane is free.
    private mutating func nextPart() -> SessionRequest? {
        guard let id = session?.uploadID, inFlight.count < lanes else { return nil }
        for number in 1...plan.partCount where parts[number] == nil && inFlight[number] == nil {
            guard let range = plan.range(ofPart: number) else { return nil }
            inFlight[number] = range.count64
            var request = signed("PUT", location.objectURL(endpoint, .uploadPart(number: number, uploadId: id)), body: .file(range))
            request.tag = number
            request.checksummed = true
            return request
        }
        return nil
    }

    /// NoSuchUpload: the recorded upload is gone (aborted, expired): record that, start anew.
    private mutating func forget() -> SessionAction {
        restarts += 1
        guard restarts <= 2 else {
            return .fail(.protocolViolation("S3 lost the multipart upload twice in one attempt"))
        }
        session = nil
        parts = [:]
        inFlight = [:]
        state = .forgetting
        return .record(.session(nil))
    }

    /// Complete was answered NoSuchUpload: the object may be there already (a lost answer).
    private mutating func verify() -> SessionAction {
        state = .verifying
        return .send(signed("HEAD", location.objectURL(endpoint)))
    }

    private func signed(_ method: String, _ url: String, headers: [String] = [], body: SessionRequest.Body = .none) -> SessionRequest {
        SessionRequest(method: method, url: url, headers: headers, body: body, signed: true)
    }

    private func isGone(_ response: SessionResponse) -> Bool {
        response.status == 404 && (try? S3XML.error(response.body))?.code == .noSuchUpload
    }

    private func failure(_ response: SessionResponse) -> TransferError {
        S3Failure.transferError(status: response.status, error: try? S3XML.error(response.body))
    }
}
