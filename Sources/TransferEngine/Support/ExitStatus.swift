/// The exit statuses of both programs (SPEC.md). Never change a value's meaning.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// The command ran but the outcome is a failure (a job failed, an illegal transition, unknown id).
    case failure = 1
    /// Bad option, malformed URL, unreadable file.
    case usage = 2
    /// The daemon cannot be reached.
    case unreachable = 3
    /// `wait --timeout` expired.
    case timeout = 124
}
