import FoundationEssentials

/// Fans events out to the daemon's log and to `events --follow` subscribers, and keeps the
/// most recent ones for `events`. A subscriber that falls behind skips progress events; one
/// that falls far behind is dropped, so no subscriber can slow transfers or grow memory.
/// Thread: the loop thread.
final class EventBus {

    static let recentLimit = 200
    /// Above this many queued bytes a subscriber gets no progress events...
    static let progressBacklog = 256 * 1024
    /// ...and above this one it is dropped.
    static let dropBacklog = 4 << 20

    /// The most recent events (at most `recentLimit`), oldest first.
    var recent: ArraySlice<TransferEvent> { kept.suffix(Self.recentLimit) }
    /// `recent`, and up to as many older ones: trimmed only when it doubles, so keeping an event
    /// moves the others once per `recentLimit` events, not each time.
    private var kept: [TransferEvent] = []
    private var subscribers: [Int: (stream: ControlServer.Stream, filter: EventFilter)] = [:]
    private let logger: Logger
    private let encoder = JSONStreamEncoder()

    init(logger: Logger) { self.logger = logger }

    var hasSubscribers: Bool { !subscribers.isEmpty }

    func subscribe(_ connection: Int, _ stream: ControlServer.Stream, _ filter: EventFilter = .all) {
        subscribers[connection] = (stream, filter)
    }

    func unsubscribe(_ connection: Int) {
        subscribers[connection] = nil
    }

    /// The event as the line a subscriber reads.
    private static func line(_ event: TransferEvent, _ encoder: JSONStreamEncoder) -> [UInt8]? {
        var response = ControlResponse(event: event)
        response.ok = true
        guard var line = try? encoder.encode(response) else { return nil }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    func publish(_ event: TransferEvent) {
        if event.type != .progress {
            if kept.count >= 2 * Self.recentLimit { kept.removeFirst(kept.count - Self.recentLimit) }
            kept.append(event)
        }
        guard !subscribers.isEmpty else { return }
        var line: [UInt8]?  // encoded once, for the first subscriber that wants it
        for (connection, subscriber) in subscribers where subscriber.filter.matches(event) {
            let backlog = subscriber.stream.queued()
            if backlog > Self.dropBacklog {
                logger.warn("dropped an events subscriber that stopped reading (\(backlog) bytes behind)")
                subscribers[connection] = nil
                subscriber.stream.close()
            } else if event.type != .progress || backlog < Self.progressBacklog {
                if line == nil { line = Self.line(event, encoder) }
                if let line { subscriber.stream.write(line) }
            }
        }
    }
}
