/// Everything that happens to the decision core: what the engine, the store, the clock and the
/// users report. Values only; the time comes with `SchedulerCore.handle(_:now:)`.
enum SchedulerEvent {
    /// The daemon started with these unfinished jobs from the store.
    case restarted([Job])
    /// Hooks recorded as due when the daemon stopped, and batches that ended just before it did.
    case hooksDue([PendingHook], batches: [Int64])
    /// A batch's end made its hook due (recorded as pending).
    case hookDue(PendingHook)
    /// A job's own bandwidth limit changed (nil: none).
    case limit(JobID, Int64?)
    /// Jobs were queued (a command's one, a manifest's all) and recorded: taken in together,
    /// before any of them starts, so the best of them start first.
    case adopted([Job])
    /// `modify` changed a job that is not running (`JobChanges`, applied and checked).
    case modified(Job)
    /// A download into a directory was named by the server's answer (and the name recorded).
    case named(JobID, path: String)
    /// A user's command for a job: the job in memory, or `loaded` from the store when it is not.
    /// `ack` is answered with `acknowledge` once the change is recorded (or refused).
    case command(JobCommand, JobID, loaded: Job?, ack: Int)
    /// A failed download's destination is its own again (`retry`), or could not be.
    case destinationClaimed(JobID, Result<Void, CommandRefusal>)
    /// An attempt's preparation found its partial file complete: only the rename is left.
    case readyToFinalize(JobID, attempt: Int)
    /// An attempt's preparation found the file already renamed into place: only the record of
    /// that was missing when the daemon stopped.
    case alreadyComplete(JobID, attempt: Int, bytes: Int64, total: Int64?)
    /// An attempt's transfer is on the engine: its `attempt_started` event.
    case launched(TransferEvent)
    /// An attempt stopped by itself (finished or failed), or could not start.
    case attemptEnded(JobID, AttemptReport)
    /// A transfer the core asked to `stop` is off the engine (`report` nil: it had none yet).
    case stopped(JobID, AttemptReport?)
    /// Finalizing (sync, verify, rename) ended: `bytes` are at the destination, or it failed;
    /// `recorded`: the completion the finishing group recorded with it (nil: none was).
    case finalized(JobID, AttemptReport, Result<Int64, TransferError>, recorded: RecordedCompletion? = nil)
    /// The store recorded the `record` (or `startAttempt`) action with this token, or could not
    /// (`error`: why, for people).
    case recorded(token: Int, error: String?)
    /// The retry timer fired.
    case retryDue
    /// One of the host's probes reached it (`scheme://host:port`).
    case hostAnswered(String)
    /// Once a second: what each running transfer did, for stall detection.
    case tick([Activity])
    /// A hook runner is free again.
    case hookFinished
    /// A wait: answered once all of `ids` have ended. `ended`: those read from the store that
    /// had ended already; `owner`: whose wait it is.
    case wait(token: Int, owner: Int, ids: Set<JobID>, ended: [Job])
    /// Whoever waited went away: forget its waits.
    case waitsDropped(owner: Int)
    /// A chunk of ended jobs the store found that a prune may delete (`token`: the chunk's).
    case prunable(token: Int, [PruneCandidate])
    /// That chunk's deletion is over (done or failed): its jobs are no longer being pruned.
    case pruned(token: Int)
    /// The daemon is stopping: running transfers are checkpointed and queued again; then
    /// `shutdownComplete`.
    case shutdown

    /// A running transfer's activity at a tick.
    struct Activity: Equatable {
        var id: JobID
        var attempt: Int
        /// Seconds since body bytes last moved (or the attempt started).
        var idleSeconds: Double
        /// It waits on a bandwidth limit: not moving is not a stall then.
        var throttled: Bool
        var stallSeconds: Int
        /// It moved less than `--speed-limit` bytes a second over `--speed-time` (those two).
        var tooSlow: (bytesPerSecond: Int64, seconds: Int)? = nil

        static func == (a: Activity, b: Activity) -> Bool {
            a.id == b.id && a.attempt == b.attempt && a.idleSeconds == b.idleSeconds && a.throttled == b.throttled
                && a.stallSeconds == b.stallSeconds && a.tooSlow?.bytesPerSecond == b.tooSlow?.bytesPerSecond
                && a.tooSlow?.seconds == b.tooSlow?.seconds
        }
    }
}
