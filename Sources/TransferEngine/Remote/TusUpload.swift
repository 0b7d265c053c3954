import FoundationEssentials

/// A tus 1.0 upload's attempt (tus.io, core + creation + termination + expiration): continues
/// the recorded upload from the offset the server reports (HEAD), or asks the server what it
/// offers (OPTIONS: `Tus-Extension`, `Tus-Max-Size`, when it answers), creates one (POST with
/// `Upload-Length` and `Upload-Metadata`) and records its URL before the first byte is sent;
/// then PATCHes chunks from that offset, recording each new offset. A 409 (offsets disagree)
/// asks the server again; an upload the server no longer has (404, 410) is forgotten and a new
/// one started; a chunk refused as too large (413) is halved, down to `minimumChunk`, and the
/// size kept with the upload. An offset must move forward within what the PATCH sent.
/// Thread: a value, driven on the loop thread.
struct TusUpload: SessionMachine {
    static let version = "Tus-Resumable: 1.0.0"
    /// Consecutive answers that send the machine back (409s, vanished uploads, PATCHes the
    /// server took nothing of) before the attempt fails and the job's retry policy takes over.
    static let maxDetours = 3

    let creationURL: String
    let size: Int64
    /// The chunk the job asked for; a server's 413 makes the upload's own smaller.
    private(set) var chunk: Int64
    /// `--chunk-size`, if given.
    private let jobChunk: Int64?
    /// `filename` and `filetype`, base64 as the creation extension wants them (some servers,
    /// tuspyserver among them, require both).
    let metadata: String
    private(set) var session: UploadSession?
    private(set) var serverBytes: Int64 = 0
    private var state = State.idle
    private var detours = 0

    /// What the server's OPTIONS offered, kept with the upload it creates.
    private var terminates: Bool?

    private enum State: Equatable {
        case idle, discovering, creating, locating, recordingSession, forgetting, recordingOffset, done
        case sending(Range<Int64>)
    }

    init(creationURL: String, size: Int64, filename: String, filetype: String, chunk: Int64?, session: UploadSession?) {
        self.creationURL = creationURL
        self.size = size
        let recorded = session?.url == nil ? nil : session
        jobChunk = chunk
        self.chunk = max(RemoteOptions.minimumChunk, recorded?.chunkSize ?? chunk ?? RemoteOptions.defaultTusChunk)
        metadata = "filename \(Self.base64(filename)),filetype \(Self.base64(filetype))"
        self.session = recorded
    }

    mutating func start() -> SessionAction {
        guard let url = session?.url else { return discover() }
        state = .locating
        return .send(SessionRequest(method: "HEAD", url: url, headers: [Self.version]))
    }

    mutating func answered(_ response: SessionResponse, to request: SessionRequest) -> SessionAction {
        switch state {
        case .discovering:
            // Optional for a server (and some answer it only with CORS headers): what it says, it is held to.
            if (200..<300).contains(response.status) {
                if let extensions = response.fields["tus-extension"] {
                    terminates = extensions.split(separator: ",").contains { String($0).trimmingSpaces.lowercased() == "termination" }
                }
                if let text = response.fields["tus-max-size"], let limit = Int64(text.trimmingSpaces), limit >= 0, size > limit {
                    return .fail(.serverLimit("the tus server takes uploads of at most \(limit) bytes (Tus-Max-Size); "
                        + "this file is \(size)"))
                }
            }
            return create()
        case .creating:
            guard response.status == 201 else { return .fail(.httpStatus(response.status)) }
            guard let location = response.fields["location"], let url = Self.resolve(location, against: creationURL) else {
                return .fail(.protocolViolation("the tus server created the upload without a usable Location"))
            }
            guard Self.origin(url) == Self.origin(creationURL) else {
                return .fail(.protocolViolation("the tus server put the upload at another origin (\(Redaction.url(url))); "
                    + "transferd sends a job's headers only to the origin it was given"))
            }
            session = UploadSession(url: url, chunkSize: chunk == requestedChunk ? nil : chunk, terminates: terminates)
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
            if response.status == 413 { return shrink() }
            guard (200..<300).contains(response.status) else { return .fail(.httpStatus(response.status)) }
            guard let offset = offset(response), offset >= range.lowerBound else {
                return .fail(.protocolViolation("the tus server's PATCH answer has no valid Upload-Offset"))
            }
            // Never more than this PATCH sent: a server that says so would have the job complete unsent.
            guard offset <= range.upperBound else {
                return .fail(.protocolViolation("the tus server reports offset \(offset) after a PATCH that ended at "
                    + "byte \(range.upperBound)"))
            }
            // A PATCH the server took nothing of is sent again a few times, not forever.
            if offset == range.lowerBound, !range.isEmpty { return detour { $0.next() } }
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

    /// The termination of a recorded upload (a cancel); nil where the server said it offers none.
    static func discard(_ session: UploadSession) -> SessionRequest? {
        guard session.terminates != false else { return nil }
        return session.url.map { SessionRequest(method: "DELETE", url: $0, headers: [version]) }
    }

    // MARK: Steps

    private mutating func discover() -> SessionAction {
        state = .discovering
        return .send(SessionRequest(method: "OPTIONS", url: creationURL, headers: [Self.version]))
    }

    /// The chunk the job's options make, before any 413.
    private var requestedChunk: Int64 { max(RemoteOptions.minimumChunk, jobChunk ?? RemoteOptions.defaultTusChunk) }

    /// 413: the chunk is halved (down to `minimumChunk`) and kept with the upload, then sent again.
    private mutating func shrink() -> SessionAction {
        guard chunk > RemoteOptions.minimumChunk else {
            return .fail(.serverLimit("the tus server refuses PATCHes of \(ByteCount.describe(chunk)) (HTTP 413), "
                + "the smallest chunk transferd sends"))
        }
        chunk = max(RemoteOptions.minimumChunk, chunk / 2)
        session?.chunkSize = chunk
        state = .recordingSession
        return .record(.session(session))
    }

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
