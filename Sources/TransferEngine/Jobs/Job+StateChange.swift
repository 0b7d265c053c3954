extension Job.Fields {
    /// Applies a state change to the in-memory copy, as `JobStore.setState` does to the row.
    mutating func apply(_ change: StateChange, now: Timestamp = .now) {
        state = change.state
        stateReason = change.reason
        error = change.error
        if let status = change.httpStatus { httpStatus = status }
        nextAttemptAt = change.nextAttemptAt
        waitReason = change.waitReason
        if let bytes = change.bytesDone { bytesDone = bytes }
        if let total = change.bytesTotal { bytesTotal = total }
        finishedAt = change.state.hasEnded ? now : nil
        if change.state == .running, startedAt == nil { startedAt = now }
        updatedAt = now
    }
}

extension Job {
    /// `Fields.apply`: the job's copy of a state change.
    mutating func apply(_ change: StateChange, now: Timestamp = .now) {
        fields.apply(change, now: now)
    }
}
