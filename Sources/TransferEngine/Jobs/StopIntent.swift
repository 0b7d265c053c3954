/// Why a running job's transfer is being stopped, and what it becomes once it has.
enum StopIntent: Equatable {
    /// `paused` by a command (acknowledged with `acks`), or `queued` again by a preemption or
    /// the daemon stopping.
    case suspend(JobState, reason: StopReason, acks: [CommandAck])
    case cancel(acks: [CommandAck])
    /// The attempt failed while it ran: it moved no byte for its stall time, or its start
    /// could not be recorded.
    case fail(TransferError)
}

extension StopIntent {
    var acks: [CommandAck] {
        switch self {
        case .suspend(_, _, let acks), .cancel(let acks): acks
        case .fail: []
        }
    }

    /// Two commands for one stopping job: a cancel wins over a pause, and both are answered.
    func merged(with other: StopIntent) -> StopIntent {
        switch (self, other) {
        case (.cancel, _), (_, .cancel): .cancel(acks: acks + other.acks)
        case (.suspend(let state, let reason, _), _): .suspend(state, reason: reason, acks: acks + other.acks)
        case (.fail, _): other
        }
    }
}
