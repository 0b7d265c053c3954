/// The event stream: progress ticks and attempt ends (the command service streams it).
extension Scheduler {
    // MARK: Events

    /// Progress events at most this often per job (milliseconds).
    static let progressInterval: UInt64 = 250

    func publishProgress() {
        guard events.hasSubscribers else { return lastProgress.removeAll() }
        var seen: [JobID: Int64] = [:]
        for scheduled in running where scheduled.transfer != nil {
            let live = scheduled.live
            let previous = lastProgress[scheduled.id] ?? live.bytesDone
            seen[scheduled.id] = live.bytesDone
            var event = TransferEvent(.progress, job: scheduled.id)
            event.bytesDone = live.bytesDone
            event.bytesTotal = live.bytesTotal
            event.rate = max(0, live.bytesDone.saturatingSubtract(previous)).saturatingMultiply(1000)
                / Int64(Self.progressInterval)
            events.publish(event)
        }
        lastProgress = seen
    }

    /// Publishes the end of an attempt with what it measured.
    func attemptFinished(_ id: JobID, attempt: Int, status: Int?, error: TransferError?, bytes: Int64,
                         metrics: AttemptMetrics?) {
        var event = TransferEvent(.attemptFinished, job: id)
        event.attempt = attempt
        event.httpStatus = status
        event.error = error?.record
        event.bytesDone = bytes
        event.metrics = metrics
        events.publish(event)
    }
}
