/// The engine's side of a running job: its transfer while the attempt runs, the partial file
/// kept for the record that follows it, and its rate. Thread: the loop thread.
final class EngineJob {
    /// The attempt in progress, from the moment its easy handle exists until it has stopped.
    var transfer: (any Transfer)?
    /// A download's partial file: synced before the record of a stop, finalized at the end.
    var file: PartialFile?
    /// What a preparation found complete (only the rename is left).
    var resume: ResumeState?
    /// Bytes per second over the last tick (batch totals add them up).
    private(set) var rate: Int64 = 0
    /// The same, smoothed (each second weighs a fifth): what a job's `rate` and ETA show.
    private(set) var smoothedRate: Double?
    private var bytesAtLastTick: Int64?
    /// The current attempt's last seconds (`--speed-time`), and which attempt they are of.
    private var speed: (attempt: Int, window: SpeedWindow)?

    /// Once a second.
    func measureRate() {
        guard let bytes = transfer?.progress.done else { return }
        rate = max(0, bytes - (bytesAtLastTick ?? bytes))
        if bytesAtLastTick != nil { smoothedRate = smoothedRate.map { $0 * 0.8 + Double(rate) * 0.2 } ?? Double(rate) }
        bytesAtLastTick = bytes
    }

    /// Once a second, after `measureRate`: whether the attempt moved less than `bytesPerSecond`
    /// on average over its last `seconds` (`SpeedWindow`).
    func isTooSlow(_ bytesPerSecond: Int64, over seconds: Int) -> Bool {
        guard let transfer, bytesPerSecond > 0 else { return false }
        if speed?.attempt != transfer.attempt || speed?.window.seconds != seconds {
            speed = (transfer.attempt, SpeedWindow(seconds: seconds))
            return false  // (its first second's rate is counted from the attempt before)
        }
        speed?.window.record(rate, held: transfer.isThrottled)
        return speed?.window.isBelow(bytesPerSecond) ?? false
    }

    /// `job` as clients should see it: with the live bytes, status, rate and ETA of the
    /// running transfer.
    func live(_ job: Job) -> Job {
        var live = job
        if let progress = transfer?.progress {
            live.bytesDone = progress.done
            live.bytesTotal = progress.total ?? job.bytesTotal
            if let smoothedRate {
                live.rate = Int64(saturating: smoothedRate.rounded())
                if let total = live.bytesTotal, smoothedRate >= 1 {
                    live.etaSeconds = Int64(saturating: (Double(max(0, total - progress.done)) / smoothedRate).rounded(.up))
                }
            }
        }
        if let status = transfer?.status { live.httpStatus = status }
        return live
    }
}
