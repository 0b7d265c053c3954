import FoundationEssentials

/// Serves the control protocol on the Unix socket: one JSON request per line in, one JSON
/// response per line out. Malformed or oversized input gets an error response; nothing a
/// client sends can stop the daemon. Thread: the loop thread.
public final class ControlServer {
    public typealias Handler = (_ request: ControlRequest, _ connection: Int,
                                _ reply: @escaping (ControlResponse) -> Void) -> Void

    private var listener: UVPipeListener?
    private var connections: [Int: Connection] = [:]
    private var nextID = 0
    private let logger: Logger
    private let onRequest: Handler
    private let onClose: (Int) -> Void

    public init(loop: UVLoop, path: String, logger: Logger, onRequest: @escaping Handler,
                onClose: @escaping (Int) -> Void) throws(UVError) {
        self.logger = logger
        self.onRequest = onRequest
        self.onClose = onClose
        listener = try UVPipeListener(loop: loop, path: path) { [unowned self] pipe in accept(pipe) }
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

        init(id: Int, pipe: UVPipeConnection) {
            self.id = id
            self.pipe = pipe
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
        connections[connection.id] = connection
        pipe.onRead = { [unowned self, unowned connection] bytes in received(bytes, on: connection) }
        pipe.onEnd = { [unowned self, unowned connection] in drop(connection) }
        pipe.startReading()
    }

    private func received(_ bytes: UnsafeRawBufferPointer, on connection: Connection) {
        for output in connection.framer.feed(bytes) {
            switch output {
            case .line(let line):
                handle(line, on: connection)
            case .tooLong:
                send(.failure(ControlError(.tooLarge, "request line longer than \(ControlRequest.maxLineBytes) bytes")), on: connection)
                return drop(connection)
            }
        }
    }

    private func handle(_ line: [UInt8], on connection: Connection) {
        guard !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) else { return }
        let data = Data(line)
        // The version first: a newer client's unknown command deserves "unsupported version".
        let probe: Probe
        do {
            probe = try JSONDecoder().decode(Probe.self, from: data)
        } catch {
            return send(.failure(ControlError(.badRequest, "not a control request: \(DecodingSummary.describe(error))")),
                        on: connection)
        }
        guard probe.version == ControlRequest.protocolVersion else {
            var response = ControlResponse.failure(ControlError(.unsupportedVersion,
                "protocol version \(probe.version.map(String.init) ?? "missing") is not supported; this daemon speaks \(ControlRequest.protocolVersion)"))
            response.id = probe.id
            return send(response, on: connection)
        }
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: data)
        } catch {
            var response = ControlResponse.failure(ControlError(.badRequest, "not a control request: \(DecodingSummary.describe(error))"))
            response.id = probe.id
            return send(response, on: connection)
        }
        let connectionID = connection.id
        onRequest(request, connectionID) { [weak self] response in
            guard let self, let connection = connections[connectionID] else { return }
            var response = response
            response.id = request.id
            send(response, on: connection)
        }
    }

    private func send(_ response: ControlResponse, on connection: Connection) {
        guard var bytes = try? Array(JSONEncoder().encode(response)) else { return }
        bytes.append(UInt8(ascii: "\n"))
        connection.pipe.write(bytes)
    }

    private func drop(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return connection.pipe.close() }
        connection.pipe.close()
        onClose(connection.id)
    }

    /// The fields every version of a request has.
    private struct Probe: Decodable {
        var version: Int?
        var id: Int?
    }
}
