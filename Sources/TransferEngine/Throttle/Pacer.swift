/// Paces one transfer against its own bucket and its direction's shared one, by pausing and
/// continuing the transfer, never by sleeping: when a bucket says wait, the transfer is paused
/// (`CURL_WRITEFUNC_PAUSE` / `CURL_READFUNC_PAUSE`) and continued when its turn comes.
/// Thread: the loop thread.
final class Pacer {
    private let global: SharedBucket
    private(set) var own: TokenBucket
    private let clock: () -> Int64
    private var timer: UVTimer?
    private let loop: UVLoop
    /// The shared bucket gave this transfer the next turn.
    var granted = false
    /// The last `admit` said wait.
    private(set) var isWaiting = false
    /// Continues the paused transfer.
    var onAllowed: () -> Void = {}

    /// Under a limit a transfer moves at most 1/piecesPerSecond of the rate in one piece: small pieces
    /// keep concurrent transfers' shares even within each second.
    static let piecesPerSecond: Int64 = 200

    init(loop: UVLoop, global: SharedBucket, rate: Int64?, clock: @escaping () -> Int64) {
        self.loop = loop
        self.global = global
        own = TokenBucket(rate: rate)
        self.clock = clock
    }

    deinit { global.leave(self) }

    var isLimited: Bool { own.isLimited || global.isLimited }

    /// The stricter of the two rates (nil when neither limits).
    var effectiveRate: Int64? {
        guard let mine = own.rate else { return global.bucket.rate }
        return global.bucket.rate.map { min($0, mine) } ?? mine
    }

    /// The largest piece worth moving at once under the limit in force.
    func chunkLimit(_ proposed: Int) -> Int {
        guard let rate = effectiveRate else { return proposed }
        return max(16 * 1024, min(proposed, Int(rate / Self.piecesPerSecond)))
    }

    /// How much a transfer that can send any amount (an upload) should send now that it is
    /// admitted: one piece of 1/piecesPerSecond of the rate (at least 1 KiB), taken on credit like
    /// a download's chunk. The debt paces the next piece, so pieces leave at a steady beat, about
    /// piecesPerSecond a second, rather than as many tiny reads as the loop wakes up for.
    func allowance(_ proposed: Int) -> Int {
        guard let rate = effectiveRate else { return proposed }
        return min(proposed, max(1024, Int(rate / Self.piecesPerSecond)))
    }

    /// True when both buckets allow moving bytes now; otherwise `onAllowed` runs later.
    func admit() -> Bool {
        guard isLimited else { return true }
        let now = clock()
        guard own.allows(now: now) else {
            scheduleOwnRetry(now: now)
            isWaiting = true
            return false
        }
        isWaiting = !global.admit(self, now: now)
        return !isWaiting
    }

    func moved(_ bytes: Int) {
        guard isLimited else { return }
        let now = clock()
        own.take(bytes, now: now)
        global.take(bytes, now: now)
    }

    func setRate(_ rate: Int64?) {
        own.setRate(rate, now: clock())
    }

    /// A limit changed: a transfer paused by its own bucket re-evaluates now.
    func recheck() {
        guard let timer else { return }
        timer.stop()
        onAllowed()
    }

    /// The transfer is over: stop waiting.
    func stop() {
        timer?.stop()
        global.leave(self)
    }

    private func scheduleOwnRetry(now: Int64) {
        if timer == nil { timer = UVTimer(loop: loop) { [unowned self] in onAllowed() } }
        timer?.start(after: UInt64(max(1, own.wait(now: now))))
    }
}
