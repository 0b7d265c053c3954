/// Progress events (the command service streams the event bus).
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
            var event = TransferEvent(.progress, of: job)
            event.bytesDone = live.bytesDone
            event.bytesTotal = live.bytesTotal
            event.rate = max(0, live.bytesDone.saturatingSubtract(previous)).saturatingMultiply(1000)
                / Int64(Self.progressInterval)
            events.publish(event)
        }
        lastProgress = seen
    }
}
