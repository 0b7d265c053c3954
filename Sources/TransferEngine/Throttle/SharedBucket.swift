/// The global bucket of one direction, shared by every transfer going that way, with a queue
/// that hands freed bandwidth to waiting transfers in turn (round robin), so that a transfer
/// whose socket happens to be ready first cannot starve the others. Thread: the loop thread.
final class SharedBucket {
    var bucket: TokenBucket
    private var queue: [Waiting] = []
    private var timer: UVTimer?
    private let loop: UVLoop
    private let clock: () -> Int64

    private struct Waiting {
        weak var pacer: Pacer?
    }

    init(loop: UVLoop, rate: Int64?, clock: @escaping () -> Int64) {
        self.loop = loop
        self.clock = clock
        bucket = TokenBucket(rate: rate)
    }

    var isLimited: Bool { bucket.isLimited }

    /// True when `pacer` may move bytes now: the bucket has no debt and nobody is ahead of it.
    func admit(_ pacer: Pacer, now: Int64) -> Bool {
        guard bucket.isLimited else { return true }
        if pacer.granted {
            pacer.granted = false
            return true
        }
        if queue.isEmpty, bucket.allows(now: now) { return true }
        if !queue.contains(where: { $0.pacer === pacer }) { queue.append(Waiting(pacer: pacer)) }
        scheduleWake(now: now)
        return false
    }

    func take(_ bytes: Int, now: Int64) { bucket.take(bytes, now: now) }

    func setRate(_ rate: Int64?, now: Int64) {
        bucket.setRate(rate, now: now)
        if !bucket.isLimited { wakeAll() } else { scheduleWake(now: now) }
    }

    /// A transfer stopped: it no longer waits.
    func leave(_ pacer: Pacer) {
        queue.removeAll { $0.pacer == nil || $0.pacer === pacer }
    }

    private func scheduleWake(now: Int64) {
        guard !queue.isEmpty else { return }
        if timer == nil { timer = UVTimer(loop: loop) { [unowned self] in wakeNext() } }
        timer?.start(after: UInt64(max(1, bucket.wait(now: now))))
    }

    /// Gives the next waiting transfer its turn once the debt is repaid, then schedules the next.
    private func wakeNext() {
        let now = clock()
        guard bucket.allows(now: now) else { return scheduleWake(now: now) }
        queue.removeAll { $0.pacer == nil }
        guard !queue.isEmpty else { return }
        let next = queue.removeFirst().pacer
        next?.granted = true
        next?.onAllowed()
        scheduleWake(now: clock())
    }

    private func wakeAll() {
        let waiting = queue.compactMap(\.pacer)
        queue.removeAll()
        for pacer in waiting { pacer.onAllowed() }
    }
}
