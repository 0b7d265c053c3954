/// Why a command was not carried out for a job: the typed reason the core gives. Only the
/// command service turns it into the protocol's error codes.
enum CommandRefusal: Error, Equatable, Sendable {
    case unknownJob(JobID)
    case unknownBatch(Int64)
    /// The job's state does not allow the command.
    case notAllowed(JobCommand, JobID, JobState)
    /// The job was quarantined when it was read (`invalid_job`): retrying cannot mend it.
    case quarantined(JobID, reason: String)
    /// Another unfinished job took the failed job's destination meanwhile.
    case destination(DestinationRefusal)
    /// The store could not record it (a full disk): the command may be given again.
    case unrecorded(JobCommand, JobID, reason: String)
    /// The store could not be read or written for another reason.
    case store(String)

    /// One line a user can act on.
    var message: String {
        switch self {
        case .unknownJob(let id): "no job \(id)"
        case .unknownBatch(let id): "no batch \(id)"
        case .notAllowed(let command, let id, let state): "cannot \(command.rawValue) job \(id): it is \(state.rawValue)"
        case .quarantined(let id, let reason): "cannot retry job \(id): \(reason)"
        case .destination(let refusal): refusal.message
        case .unrecorded(let command, let id, let reason):
            "cannot record the \(command.rawValue) of job \(id): \(reason) (free space, then \(command.rawValue) it again)"
        case .store(let message): message
        }
    }
}

extension CommandRefusal {
    /// A store error met while carrying a command out (a destination another job took is typed).
    init(_ error: any Error) {
        if let refusal = error as? DestinationRefusal {
            self = .destination(refusal)
        } else {
            self = .store("\(error)")
        }
    }
}
