/// The record of an attempt's start: the job `running` with the attempt's number, and the
/// attempt's row (`JobStore.beginAttempt`), with the resume state it starts from when that is
/// worth a row.
struct AttemptBegin: Sendable {
    var id: JobID
    var number: Int
    /// The byte the attempt asks for first.
    var rangeStart: Int64
    var startedOver: StartOverReason?
    var resume: ResumeState?
    /// The time of the start (the scheduler's clock when it decided it).
    var at: Timestamp

    func write(to store: JobStore) throws {
        try store.beginAttempt(id, number: number, rangeStart: rangeStart, startedOver: startedOver, resume: resume, now: at)
    }
}
