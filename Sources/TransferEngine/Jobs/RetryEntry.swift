/// A waiting job in the retry queue: its due time, then its id. Thread: a value; any.
struct RetryEntry: Comparable {
    var due: Timestamp
    var id: JobID

    static func < (lhs: RetryEntry, rhs: RetryEntry) -> Bool { (lhs.due, lhs.id) < (rhs.due, rhs.id) }
}
