/// The global bucket of one direction, shared by every transfer going that way.
/// Thread: the loop thread.
final class SharedBucket {
    var bucket: TokenBucket

    init(rate: Int64?) { bucket = TokenBucket(rate: rate) }
}

/// Paces one transfer against its own bucket and its direction's global one, by pausing and
/// continuing the transfer, never by sleeping: when a bucket is in debt the transfer is paused
/// (`CURL_WRITEFUNC_PAUSE` / `CURL_READFUNC_PAUSE`) and a timer continues it once both allow.
/// Thread: the loop thread.
final class Pacer {
    private let global: SharedBucket
    private(set) var own: TokenBucket
    private let clock: () -> Int64
    private var timer: UVTimer?
    private let loop: UVLoop
    /// Continues the paused transfer.
    var onAllowed: () -> Void = {}

    init(loop: UVLoop, global: SharedBucket, rate: Int64?, clock: @escaping () -> Int64) {
        self.loop = loop
        self.global = global
        own = TokenBucket(rate: rate)
        self.clock = clock
    }

    var isLimited: Bool { own.isLimited || global.bucket.isLimited }

    /// The stricter of the two rates (nil when neither limits).
    var effectiveRate: Int64? {
        [own.rate, global.bucket.rate].compactMap { $0 }.min()
    }

    /// The largest piece worth moving at once: a tenth of a second of the rate.
    func chunkLimit(_ proposed: Int) -> Int {
        guard let rate = effectiveRate else { return proposed }
        return max(1024, min(proposed, Int(rate / 10)))
    }

    /// True when both buckets allow moving bytes now; otherwise arranges `onAllowed` for later.
    func admit() -> Bool {
        guard isLimited else { return true }
        let now = clock()
        if own.allows(now: now), global.bucket.allows(now: now) { return true }
        scheduleRetry(now: now)
        return false
    }

    func moved(_ bytes: Int) {
        guard isLimited else { return }
        let now = clock()
        own.take(bytes, now: now)
        global.bucket.take(bytes, now: now)
    }

    func setRate(_ rate: Int64?) {
        own.setRate(rate, now: clock())
    }

    /// A limit changed: a paused transfer re-evaluates now rather than when its timer says.
    func recheck() {
        guard timer != nil else { return }
        timer?.stop()
        onAllowed()
    }

    private func scheduleRetry(now: Int64) {
        let wait = max(own.wait(now: now), global.bucket.wait(now: now), 1)
        if timer == nil {
            timer = UVTimer(loop: loop) { [unowned self] in onAllowed() }
        }
        timer?.start(after: UInt64(wait))
    }
}
