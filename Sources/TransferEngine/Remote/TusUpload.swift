import FoundationEssentials

/// A tus 1.0 upload's attempt (tus.io, core + creation + termination + expiration): continues
/// the recorded upload from the offset the server reports (HEAD), or creates one (POST with
/// `Upload-Length` and `Upload-Metadata`) and records its URL before the first byte is sent;
/// then PATCHes chunks from that offset, recording each new offset. A 409 (offsets disagree)
/// asks the server again; an upload the server no longer has (404, 410) is forgotten and a new
/// one started. Thread: a value, driven on the loop thread.
struct TusUpload: SessionMachine {
    static let version = "Tus-Resumable: 1.0.0"
    /// Consecutive answers that send the machine back (409s, vanished uploads) before the
    /// attempt fails and the job's retry policy takes over.
    static let maxDetours = 3

    let creationURL: String
    let size: Int64
    let chunk: Int64
    /// `filename` and `filetype`, base64 as the creation extension wants them (some servers,
    /// tuspyserver among them, require both).
    let metadata: String
    private(set) var session: UploadSession?
    private(set) var serverBytes: Int64 = 0
    private var state = State.idle
    private var detours = 0

    private enum State: Equatable {
        case idle, creating, locating, recordingSession, forgetting, recordingOffset, done
        case sending(Range<Int64>)
    }

    init(creationURL: String, size: Int64, filename: String, filetype: String, chunk: Int64?, session: UploadSession?) {
        self.creationURL = creationURL
        self.size = size
        self.chunk = max(RemoteOptions.minimumChunk, chunk ?? RemoteOptions.defaultTusChunk)
        metadata = "filename \(Self.base64(filename)),filetype \(Self.base64(filetype))"
        self.session = session?.url == nil ? nil : session
    }

    mutating func start() -> SessionAction {
        guard let url = session?.url else { return create() }
        state = .locating
        return .send(SessionRequest(method: "HEAD", url: url, headers: [Self.version]))
    }

    mutating func answered(_ response: SessionResponse, to request: SessionRequest) -> SessionAction {
        switch state {
        case .creating:
            guard response.status == 201 else { return .fail(.httpStatus(response.status)) }
            guard let location = response.fields["location"], let url = Self.resolve(location, against: creationURL) else {
                return .fail(.protocolViolation("the tus server created the upload without a usable Location"))
            }
            guard Self.origin(url) == Self.origin(creationURL) else {
                return .fail(.protocolViolation("the tus server put the upload at another origin (\(Redaction.url(url))); "
                    + "transferd sends a job's headers only to the origin it was given"))
            }
            session = UploadSession(url: url)
            serverBytes = 0
            state = .recordingSession
            return .record(.session(session))
        case .locating:
            if Self.isGone(response.status) { return forget() }
            guard (200..<300).contains(response.status) else { return .fail(.httpStatus(response.status)) }
            guard let offset = offset(response) else {
                return .fail(.protocolViolation("the tus server's HEAD answer has no valid Upload-Offset"))
            }
            serverBytes = offset
            return next()
        case .sending(let range):
            if response.status == 409 { return detour { $0.start() } }
            if Self.isGone(response.status) { return forget() }
            guard (200..<300).contains(response.status) else { return .fail(.httpStatus(response.status)) }
            guard let offset = offset(response), offset >= range.lowerBound else {
                return .fail(.protocolViolation("the tus server's PATCH answer has no valid Upload-Offset"))
            }
            detours = 0
            serverBytes = offset
            state = .recordingOffset
            return .record(.offset(offset))
        case .idle, .recordingSession, .forgetting, .recordingOffset, .done:  // (one request at a time)
            return .fail(.protocolViolation("an answer the tus upload did not ask for"))
        }
    }

    mutating func recorded() -> SessionAction {
        switch state {
        case .recordingSession, .recordingOffset: return next()
        case .forgetting: return create()
        default: return .fail(.protocolViolation("a record the tus upload did not ask for"))
        }
    }

    /// The termination of a recorded upload (a cancel).
    static func discard(_ session: UploadSession) -> SessionRequest? {
        session.url.map { SessionRequest(method: "DELETE", url: $0, headers: [version]) }
    }

    // MARK: Steps

    private mutating func create() -> SessionAction {
        state = .creating
        return .send(SessionRequest(method: "POST", url: creationURL,
                                    headers: [Self.version, "Upload-Length: \(size)", "Upload-Metadata: \(metadata)"],
                                    body: .bytes([])))
    }

    /// The recorded upload is gone: record that, then create a new one.
    private mutating func forget() -> SessionAction {
        detour { machine in
            machine.session = nil
            machine.serverBytes = 0
            machine.state = .forgetting
            return .record(.session(nil))
        }
    }

    private mutating func detour(_ step: (inout TusUpload) -> SessionAction) -> SessionAction {
        detours += 1
        guard detours <= Self.maxDetours else {
            return .fail(.protocolViolation("the tus server disagreed \(Self.maxDetours) times in a row about the upload's offset or existence"))
        }
        return step(&self)
    }

    private mutating func next() -> SessionAction {
        guard serverBytes < size, let url = session?.url else {
            state = .done
            return .complete
        }
        let range = serverBytes..<min(size, serverBytes.saturatingAdd(chunk))
        state = .sending(range)
        return .send(SessionRequest(method: "PATCH", url: url,
                                    headers: [Self.version, "Upload-Offset: \(range.lowerBound)",
                                              "Content-Type: application/offset+octet-stream"],
                                    body: .file(range)))
    }

    private func offset(_ response: SessionResponse) -> Int64? {
        guard let text = response.fields["upload-offset"], let offset = Int64(text.trimmingSpaces), offset >= 0,
              offset <= size else { return nil }
        return offset
    }

    private static func isGone(_ status: Int) -> Bool { status == 404 || status == 410 }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// `location` (absolute, or relative to `base`) as an absolute http(s) URL.
    static func resolve(_ location: String, against base: String) -> String? {
        let trimmed = location.trimmingSpaces
        guard !trimmed.isEmpty, let url = URL(string: trimmed, relativeTo: URL(string: base)) else { return nil }
        let absolute = url.absoluteString
        guard absolute.hasPrefix("http://") || absolute.hasPrefix("https://") else { return nil }
        return absolute
    }

    private static func origin(_ url: String) -> String? { HostKey.key(url) }
}
