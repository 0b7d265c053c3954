/// A download's start kept on the loop instead of recorded at once (`Scheduler+HeldStarts`):
/// written with the job's next record, or after `Scheduler.startHoldMilliseconds`, whichever
/// comes first. Only a start that records nothing but the job's state and the attempt's row is
/// held (from byte 0, no resume state): a few plain values, cheap to carry in every record.
/// `token`: the running state's record, which the core hears of then.
struct HeldStart: Sendable {
    var token: Int
    var id: JobID
    var number: Int
    var at: Timestamp

    /// The start as held, if it can be: nil when it records more than the state and the row.
    init?(token: Int, _ begin: AttemptBegin) {
        guard begin.resume == nil, begin.rangeStart == 0, begin.startedOver == nil else { return nil }
        self.token = token
        id = begin.id
        number = begin.number
        at = begin.at
    }

    func write(to store: JobStore) throws {
        try store.beginAttempt(id, number: number, rangeStart: 0, now: at)
    }
}
