/// The bytes an attempt moved in each of its last seconds, to tell a trickle from a transfer:
/// curl's `--speed-limit`/`--speed-time`, judged once a second. A host that sends a byte now
/// and then never trips the stall timeout, and four such downloads would hold every slot. A
/// second the attempt was held back by a limit (its own or the global one) is not its speed,
/// so a window with one in it is never too slow. Pure; a value owned by its `EngineJob`.
struct SpeedWindow: Equatable {
    let seconds: Int
    private var bytes: [Int64] = []
    private var held: [Bool] = []
    private var next = 0

    init(seconds: Int) {
        self.seconds = max(1, seconds)
    }

    /// One second's bytes, and whether a limit held the attempt back in it.
    mutating func record(_ moved: Int64, held wasHeld: Bool) {
        if bytes.count < seconds {
            bytes.append(max(0, moved))
            held.append(wasHeld)
        } else {
            bytes[next] = max(0, moved)
            held[next] = wasHeld
            next = (next + 1) % seconds
        }
    }

    /// A whole window of seconds, none held back, that moved less than `bytesPerSecond` on average.
    func isBelow(_ bytesPerSecond: Int64) -> Bool {
        guard bytesPerSecond > 0, bytes.count == seconds, !held.contains(true) else { return false }
        return bytes.reduce(0, +) < bytesPerSecond.saturatingMultiply(Int64(seconds))
    }
}
