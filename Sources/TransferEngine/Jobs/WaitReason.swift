/// Why a job waits (state `waiting`): stored with it and decided on, where the state reason is
/// only its text for people. The raw values are stable words.
public enum WaitReason: String, Codable, Equatable, Sendable {
    /// Its host does not answer: one probe per host queues the job again as soon as it does.
    case offline
    /// Until `nextAttemptAt`: backoff after a failed attempt (and the server's Retry-After).
    case backoff
    /// No file descriptor to spare: tried again within seconds.
    case descriptors
}
