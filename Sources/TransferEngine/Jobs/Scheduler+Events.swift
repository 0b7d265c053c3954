/// The event stream: progress ticks, attempt ends, and the `events` command.
extension Scheduler {
    // MARK: Events

    /// Progress events at most this often per job (milliseconds).
    static let progressInterval: UInt64 = 250

    func publishProgress() {
        guard events.hasSubscribers else { return lastProgress.removeAll() }
        var seen: [JobID: Int64] = [:]
        for (id, engineJob) in engine where engineJob.transfer != nil {
            guard let job = core.jobs[id]?.job else { continue }
            let live = engineJob.live(job)
            let previous = lastProgress[id] ?? live.bytesDone
            seen[id] = live.bytesDone
            var event = TransferEvent(.progress, job: id)
            event.bytesDone = live.bytesDone
            event.bytesTotal = live.bytesTotal
            event.rate = max(0, live.bytesDone.saturatingSubtract(previous)).saturatingMultiply(1000)
                / Int64(Self.progressInterval)
            events.publish(event)
        }
        lastProgress = seen
    }

    // MARK: events

    /// The most recent events; with `follow`, every later one on the same connection.
    func streamEvents(_ request: ControlRequest, connection: Int, reply: @escaping Reply) {
        reply(ControlResponse(events: events.recent))
        guard request.follow == true else { return }
        guard let stream = streams(connection) else { return }
        events.subscribe(connection, stream)
    }
}
