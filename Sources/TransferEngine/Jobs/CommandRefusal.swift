/// Why a command on existing jobs (or a read of them) was not done: the typed reason the
/// scheduler gives. Only the control protocol turns it into its error codes (in Control/).
enum CommandRefusal: Error, Equatable, Sendable {
    case unknownJob(JobID)
    case unknownBatch(Int64)
    /// The job's state does not allow the command.
    case notAllowed(JobCommand, JobID, JobState)
    /// A job's limit is not changed once it has ended (completed or cancelled).
    case notLimitable(JobID, JobState)
    /// `modify` changes only a job that is not transferring and may still run.
    case notModifiable(JobID, JobState)
    /// A quarantined job (its stored row cannot run) is not retried; `reason` says why.
    case quarantined(JobID, reason: String)
    /// The store could not record the command (a full disk): it may be given again.
    case notRecorded(JobCommand, JobID, String)
    /// A failed download cannot own its destination again (another job took it).
    case destination(DestinationRefusal)
    /// The store could not claim a failed job's destination for its retry.
    case notClaimed(JobID, String)
    /// Only an unfinished download with a checkpoint has resume data.
    case noResumeData(JobID, JobState)
    /// The job or manifest itself was refused (`add`, `submit`).
    case refused(JobRefusal)
    /// The store failed to read or record; the caller names what it was doing.
    case store(String)
    /// Not a failure: the job already is where the command would move it
    /// (`JobCommand.isSatisfied`); the command's answer lists it as unchanged.
    case unchanged(JobCommand, JobID, JobState)

    /// One line a user can act on (for `store`, the store's own words: the caller adds what
    /// it was doing).
    var message: String {
        switch self {
        case .unknownJob(let id): "no job \(id)"
        case .unknownBatch(let id): "no batch \(id)"
        case .notAllowed(let command, let id, let state): "cannot \(command.rawValue) job \(id): it is \(state.rawValue)"
        case .notLimitable(let id, let state): "cannot limit job \(id): it is \(state.rawValue)"
        case .notModifiable(let id, let state):
            "cannot modify job \(id): it is \(state.rawValue)" + (state == .running ? " (pause it first)" : "")
        case .quarantined(let id, let reason): "cannot retry job \(id): \(reason)"
        case .notRecorded(let command, let id, let error):
            "cannot record the \(command.rawValue) of job \(id): \(error) (free space, then \(command.rawValue) it again)"
        case .destination(let refusal): refusal.message
        case .notClaimed(let id, let error): "cannot retry job \(id): \(error)"
        case .noResumeData(let id, let state): "job \(id) has no resume data: it is \(state.rawValue)"
        case .refused(let refusal): refusal.message
        case .store(let error): error
        case .unchanged(_, let id, let state): "job \(id) is already \(state.rawValue)"
        }
    }
}

extension CommandRefusal {
    /// The store could not claim a failed job's destination for its retry: another job owns it
    /// (typed), or the store failed.
    init(claiming id: JobID, _ error: any Error) {
        if let refusal = error as? DestinationRefusal {
            self = .destination(refusal)
        } else {
            self = .notClaimed(id, "\(error)")
        }
    }
}
