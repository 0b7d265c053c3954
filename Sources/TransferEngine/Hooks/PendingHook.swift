/// A completion hook waiting for a runner: whose it is and what to run.
struct PendingHook: Sendable {
    var job: JobID?
    var batch: Int64?
    /// `complete` or `fail`.
    var event: String
    var command: HookCommand
}
