/// Whether a control connection may take its next request. A client that does not read its
/// replies, or has many requests in progress, is not read from until it catches up: its
/// requests wait in the socket (its writes block) instead of in the daemon's memory.
/// A value fed what happens; the server acts on `mayTakeRequest`. Pure; unit-tested.
struct ConnectionFlow: Equatable, Sendable {
    /// Above this many reply bytes the client has not taken, no further request is read...
    static let highWater = 1 << 20
    /// ...until they drain below this.
    static let lowWater = 256 << 10
    /// Requests of one connection in progress at once (a pending `wait` is one).
    static let maxInProgress = 16

    private(set) var inProgress = 0
    /// The replies went above `highWater` and have not yet drained below `lowWater`.
    private(set) var draining = false

    init() {}

    var mayTakeRequest: Bool { !draining && inProgress < Self.maxInProgress }

    /// The bytes queued for the client now (after a write, or when one finished).
    mutating func queued(_ bytes: Int) {
        if bytes > Self.highWater {
            draining = true
        } else if bytes < Self.lowWater {
            draining = false
        }
    }

    mutating func requestStarted() { inProgress += 1 }

    mutating func requestAnswered() {
        precondition(inProgress > 0, "an answer without a request")
        inProgress -= 1
    }
}
