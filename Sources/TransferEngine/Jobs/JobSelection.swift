/// Which jobs a command or a wait is about: named ones, every one in memory, or a batch's.
enum JobSelection: Equatable, Sendable {
    case ids([JobID])
    /// Every job in memory (and, for retry and cancel, the failed ones in the store).
    case all
    case batch(Int64)
}
