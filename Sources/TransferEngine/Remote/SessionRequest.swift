/// One request of a resumable upload's attempt, as its protocol's state machine asks for it.
/// Thread: a value; any.
struct SessionRequest: Equatable, Sendable {
    enum Body: Equatable, Sendable {
        case none
        /// These bytes of the source file, streamed from disk.
        case file(Range<Int64>)
        /// A small body made in memory (an S3 completion's XML).
        case bytes([UInt8])
    }

    var method: String
    var url: String
    /// The protocol's own headers (the job's are added when the request is made).
    var headers: [String] = []
    var body = Body.none
    /// Signed for S3.
    var signed = false
    /// Which of the machine's concurrent requests this is (an S3 part's number; 0: the only one).
    var tag = 0
    /// The body's CRC32 goes with it (`x-amz-checksum-crc32`): asked for by the machine,
    /// computed from the file (base64) before the request is sent.
    var checksummed = false
    var checksum: String?

    static let checksumHeader = "x-amz-checksum-crc32"

    var bodyLength: Int64 {
        switch body {
        case .none: 0
        case .file(let range): range.upperBound - range.lowerBound
        case .bytes(let bytes): Int64(bytes.count)
        }
    }
}

/// A session request's answer: its status, head fields (lowercased names) and the start of its body.
struct SessionResponse: Equatable, Sendable {
    var status: Int
    var fields: [String: String] = [:]
    var body: [UInt8] = []
}

/// What a session's state machine asks for next.
enum SessionAction: Equatable, Sendable {
    case send(SessionRequest)
    /// Record this, then tell the machine it is recorded (`recorded()`).
    case record(SessionChange)
    /// The upload is complete on the server.
    case complete
    case fail(TransferError)
    /// Nothing until a request in flight is answered.
    case idle
}

/// A durable step of a session, recorded before the machine goes on.
enum SessionChange: Equatable, Sendable {
    /// A new upload exists on the server (or none: the recorded one is gone).
    case session(UploadSession?)
    /// The server acknowledged a part (S3), and now holds this many bytes of the file.
    case part(UploadedPart, serverBytes: Int64)
    /// The server's list of the upload's parts replaces the recorded one (S3, on resume).
    case parts([UploadedPart], serverBytes: Int64)
    /// The server holds this many bytes (tus, after each PATCH).
    case offset(Int64)
}

/// A resumable upload protocol's attempt as a state machine (swift-nio style: it is given
/// events and returns what to do; it does no I/O). Thread: a value, driven on the loop thread.
protocol SessionMachine: Sendable {
    /// The first action of an attempt.
    mutating func start() -> SessionAction
    /// `request` was answered (any status).
    mutating func answered(_ response: SessionResponse, to request: SessionRequest) -> SessionAction
    /// The last `record` is durable.
    mutating func recorded() -> SessionAction
    /// Another request to send beside those in flight (S3 parts in parallel), or nil.
    mutating func more() -> SessionRequest?
    /// Bytes of the file the server holds, as it last reported them.
    var serverBytes: Int64 { get }
}

extension SessionMachine {
    mutating func more() -> SessionRequest? { nil }
}
