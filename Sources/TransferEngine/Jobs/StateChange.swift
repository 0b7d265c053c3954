/// A state change and what goes with it, recorded in one statement.
public struct StateChange: Sendable {
    public var state: JobState
    public var reason: String?
    public var error: JobError?
    public var httpStatus: Int?
    public var nextAttemptAt: Timestamp?
    public var bytesDone: Int64?
    /// The entity's size, where this change learns it (a download's completion: its finalizing
    /// mark, which had it, leaves the job's row alone).
    public var bytesTotal: Int64?
    /// For `waiting`: why (what makes it run again).
    public var waitReason: WaitReason?

    public init(_ state: JobState, reason: String? = nil, error: JobError? = nil, httpStatus: Int? = nil,
                nextAttemptAt: Timestamp? = nil, bytesDone: Int64? = nil, bytesTotal: Int64? = nil,
                waitReason: WaitReason? = nil) {
        precondition((state == .waiting) == (waitReason != nil), "a waiting job, and only one, says why it waits")
        self.waitReason = waitReason
        self.state = state
        self.reason = reason
        self.error = error
        self.httpStatus = httpStatus
        self.nextAttemptAt = nextAttemptAt
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
    }
}
