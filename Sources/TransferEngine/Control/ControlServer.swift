import FoundationEssentials

/// Serves the control protocol on the Unix socket: one JSON request per line in, one JSON
/// response per line out. Malformed or oversized input gets an error response; nothing a
/// client sends can stop the daemon, and no client can take its memory or descriptors: a
/// connection is read from only while its `ConnectionFlow` allows, and there are at most
/// `maxConnections` (the quietest one makes room for a new one). Thread: the loop thread.
public final class ControlServer {
    public typealias Handler = (_ request: ControlRequest, _ origin: Origin,
                                _ reply: @escaping (ControlResponse) -> Void) -> Void

    /// Where a request came from.
    public struct Origin: Sendable {
        public let connection: Int
        /// The length of the request's line: what keeping the request costs.
        public let lineBytes: Int
    }

    public let maxConnections: Int
    private var listener: UVPipeListener?
    private var connections: [Int: Connection] = [:]
    private var nextID = 0
    /// Counts reads and finished writes: a connection's last one tells how long it has been idle.
    private var activityClock = 0
    /// The cap was reached and logged (again once the connections fell to half of it).
    private var warnedFull = false
    private let logger: Logger
    private let onRequest: Handler
    private let onClose: (Int) -> Void

    /// Where the server listens.
    public enum Endpoint: Sendable {
        /// A socket it binds at this path (0600).
        case path(String)
        /// A listening socket it is handed (`SocketActivation`); the server owns it from now on.
        case descriptor(Int32)
    }

    public init(loop: UVLoop, endpoint: Endpoint, maxConnections: Int, logger: Logger, onRequest: @escaping Handler,
                onClose: @escaping (Int) -> Void) throws(UVError) {
        precondition(maxConnections > 0)
        self.maxConnections = maxConnections
        self.logger = logger
        self.onRequest = onRequest
        self.onClose = onClose
        let accept: (UVPipeConnection) -> Void = { [unowned self] pipe in self.accept(pipe) }
        listener = switch endpoint {
        case .path(let path): try UVPipeListener(loop: loop, path: path, onConnection: accept)
        case .descriptor(let descriptor): try UVPipeListener(loop: loop, descriptor: descriptor, onConnection: accept)
        }
    }

    /// A connection used for a stream of lines (`events --follow`).
    public struct Stream {
        /// Bytes written but not yet taken by the client.
        public let queued: () -> Int
        public let write: ([UInt8]) -> Void
        public let close: () -> Void
    }

    public func stream(for id: Int) -> Stream? {
        guard let connection = connections[id] else { return nil }
        connection.streaming = true
        return Stream(queued: { [weak connection] in connection?.pipe.queuedBytes ?? 0 },
                      write: { [weak connection] line in connection?.pipe.write(line) },
                      close: { [weak self, weak connection] in
                          if let connection { self?.drop(connection) }
                      })
    }

    /// Stops listening and closes every connection.
    public func close() {
        listener = nil
        for connection in connections.values { connection.pipe.close() }
        connections.removeAll()
    }

    private final class Connection {
        let id: Int
        let pipe: UVPipeConnection
        var framer = LineFramer(limit: ControlRequest.maxLineBytes)
        var flow = ConnectionFlow()
        /// Complete lines not handled yet: what one read brought beyond what the flow allowed.
        private var backlog: [[UInt8]] = []
        private var backlogStart = 0
        /// `events --follow`: never idle.
        var streaming = false
        var lastActivity = 0
        /// Inside `pump` (a reply may come while a request is handled).
        var pumping = false

        init(id: Int, pipe: UVPipeConnection) {
            self.id = id
            self.pipe = pipe
        }

        var hasBacklog: Bool { backlogStart < backlog.count }

        /// Nothing in progress, nothing to handle, no stream: closing it loses nothing.
        var isIdle: Bool { flow.inProgress == 0 && !hasBacklog && !streaming }

        func hold(_ line: [UInt8]) { backlog.append(line) }

        func nextLine() -> [UInt8]? {
            guard hasBacklog else { return nil }
            let line = backlog[backlogStart]
            backlogStart += 1
            if backlogStart == backlog.count {
                backlog.removeAll()
                backlogStart = 0
            }
            return line
        }
    }

    private func accept(_ pipe: UVPipeConnection) {
        nextID += 1
        let connection = Connection(id: nextID, pipe: pipe)
        let uid = pipe.peerUID
        guard let uid, uid == ProcessIdentity.uid || uid == 0 else {
            logger.warn("refused a control connection from uid \(uid.map(String.init) ?? "unknown")")
            send(.failure(ControlError(.forbidden, "this transferd belongs to uid \(ProcessIdentity.uid); uid \(uid.map(String.init) ?? "unknown") may not control it")), on: connection)
            return pipe.close()
        }
        makeRoom()
        connections[connection.id] = connection
        touch(connection)
        pipe.onRead = { [unowned self, unowned connection] bytes in received(bytes, on: connection) }
        pipe.onEnd = { [unowned self, unowned connection] in drop(connection) }
        pipe.onWritten = { [unowned self, unowned connection] in
            touch(connection)
            pump(connection)
        }
        pipe.startReading()
    }

    /// At the cap, closes the connection idle the longest or, when none is idle (each has a
    /// request in progress, or follows events), the one quiet the longest: a new client, the
    /// owner's CLI among them, is always served.
    private func makeRoom() {
        if connections.count < maxConnections / 2 { warnedFull = false }
        guard connections.count >= maxConnections else { return }
        if !warnedFull {
            warnedFull = true
            logger.warn("\(connections.count) control connections, the most this daemon serves: "
                + "closing the quietest to make room")
        }
        let quietest = { (candidates: [Connection]) in candidates.min { $0.lastActivity < $1.lastActivity } }
        if let idle = quietest(connections.values.filter(\.isIdle)) {
            logger.debug("closed control connection \(idle.id), idle the longest, to make room")
            drop(idle)
        } else if let busy = quietest(Array(connections.values)) {
            logger.debug("closed control connection \(busy.id), quiet the longest, to make room: all were busy")
            drop(busy)
        }
    }

    private func touch(_ connection: Connection) {
        activityClock += 1
        connection.lastActivity = activityClock
    }

    private func received(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        touch(connection)
        for output in connection.framer.feed(bytes) {
            switch output {
            case .line(let line):
                connection.hold(line)
            case .tooLong:
                send(.failure(ControlError(.tooLarge, "request line longer than \(ControlRequest.maxLineBytes) bytes")), on: connection)
                return drop(connection)
            }
        }
        pump(connection)
    }

    /// Handles held lines while the flow allows; reads more only when none are left and it still does.
    private func pump(_ connection: Connection) {
        guard !connection.pumping else { return }
        connection.pumping = true
        defer { connection.pumping = false }
        while connections[connection.id] === connection {
            connection.flow.queued(connection.pipe.queuedBytes)
            guard connection.flow.mayTakeRequest, let line = connection.nextLine() else { break }
            handle(line, on: connection)
        }
        guard connections[connection.id] === connection else { return }
        if connection.hasBacklog || !connection.flow.mayTakeRequest {
            connection.pipe.stopReading()
        } else {
            connection.pipe.startReading()
        }
    }

    private func handle(_ line: [UInt8], on connection: Connection) {
        guard !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) else { return }
        // One decoding of the whole line where it is a request of this version (a manifest's
        // chunk is hundreds of jobs); the version is looked at alone only when it is not.
        var request: ControlRequest
        do {
            request = try JSONTreeDecoder().decode(ControlRequest.self, from: line)
        } catch {
            return send(refusal(of: Data(line), error), on: connection)
        }
        guard request.version == ControlRequest.protocolVersion else {
            return send(Self.unsupported(request.version, id: request.id), on: connection)
        }
        do {
            try request.normalizeIDs()
        } catch {
            var response = ControlResponse.failure(error)
            response.id = request.id
            return send(response, on: connection)
        }
        let connectionID = connection.id
        connection.flow.requestStarted()
        var answered = false  // exactly one answer per request, whatever the handler does
        onRequest(request, Origin(connection: connectionID, lineBytes: line.count)) { [weak self] response in
            guard !answered, let self, let connection = connections[connectionID] else { return }
            answered = true
            var response = response
            response.id = request.id
            connection.flow.requestAnswered()
            send(response, on: connection)
            pump(connection)
        }
    }

    /// Why a line that is not a request of this version is refused: a version this daemon does
    /// not speak comes first (a newer client's unknown command deserves "unsupported version").
    private func refusal(of data: Data, _ error: any Error) -> ControlResponse {
        let probe: Probe
        do {
            probe = try JSONDecoder().decode(Probe.self, from: data)
        } catch {
            return .failure(ControlError(.badRequest, "not a control request: \(DecodingSummary.describe(error))"))
        }
        guard probe.version == ControlRequest.protocolVersion else { return Self.unsupported(probe.version, id: probe.id) }
        var response = ControlResponse.failure(ControlError(.badRequest, "not a control request: \(DecodingSummary.describe(error))"))
        response.id = probe.id
        return response
    }

    private static func unsupported(_ version: Int?, id: Int?) -> ControlResponse {
        var response = ControlResponse.failure(ControlError(.unsupportedVersion,
            "protocol version \(version.map(String.init) ?? "missing") is not supported; this daemon speaks \(ControlRequest.protocolVersion)"))
        response.id = id
        return response
    }

    private func send(_ response: ControlResponse, on connection: Connection) {
        guard var bytes = try? JSONStreamEncoder().encode(response) else { return }
        bytes.append(UInt8(ascii: "\n"))
        connection.pipe.write(bytes)
    }

    private func drop(_ connection: Connection) {
        guard connections[connection.id] === connection else { return connection.pipe.close() }
        connections[connection.id] = nil
        connection.pipe.close()
        onClose(connection.id)
    }

    /// The fields every version of a request has.
    private struct Probe: Decodable {
        var version: Int?
        var id: Int?
    }
}
