/// One attempt in progress, as the scheduler drives it: a download or an upload.
/// Thread: the loop thread.
protocol Transfer: AnyObject {
    var jobID: JobID { get }
    var attempt: Int { get }
    var easy: CurlEasy { get }
    /// Every handle of the transfer in the engine now (default: `easy`).
    var easies: [CurlEasy] { get }
    /// The final response's status, once its head arrived.
    var status: Int? { get }
    /// Body bytes moved in this attempt (received for a download, sent for an upload).
    var transferred: Int64 { get }
    /// Which way `transferred` went: what the daemon's rates add it to.
    var direction: TransferDirection { get }
    /// The job's bytes and total as they are now (a download counts what it had before the attempt).
    var progress: (done: Int64, total: Int64?) { get }
    /// Paces the transfer against its own and the global limit of its direction.
    var pacer: Pacer { get }
    /// Once a second, on the loop thread: what the transfer does regularly (a download's checkpoint).
    func tick()
    /// Stops feeding the transfer; called once it is out of the engine.
    func stop()
    /// Runs `work` once nothing of this transfer is on its way to disk.
    func whenIdle(_ work: @escaping () -> Void)
    /// The attempt's result, given libcurl's code for it.
    func outcome(_ code: CurlCode) -> AttemptOutcome
    /// What the core is told once the transfer is over: the report with `outcome`.
    func report(_ outcome: AttemptOutcome) -> AttemptReport
    /// A download's partial file (synced before the record of a stop, finalized at the end).
    var partialFile: PartialFile? { get }
    /// Where a redirect the transfer does not follow itself goes on from (a download's).
    var redirectStep: RedirectStep? { get }
    /// The final response's `Retry-After`, in milliseconds, when it had one.
    var retryAfter: Int64? { get }
    /// When body bytes last moved (monotonic seconds), or the attempt started.
    var lastActivity: Double { get }
    /// The transfer waits on a bandwidth limit: not moving is not a stall then.
    var isThrottled: Bool { get }
    var stallSeconds: Int { get }
}

enum TransferDirection: Equatable, Sendable {
    case down, up
}

/// What the next request of a redirected download continues with.
struct RedirectStep {
    var headers: [String]
    /// Secret whatever their names (`RedirectGuard.secretNames`).
    var secretNames: Set<String>
    var redirectsLeft: Int
    var file: PartialFile
    var resume: ResumeState
    /// The attempt's `--max-time` counts on across its steps.
    var deadline: AttemptDeadline?
}

extension Transfer {
    var easies: [CurlEasy] { [easy] }

    /// The report's fields every transfer has.
    func baseReport(_ outcome: AttemptOutcome) -> AttemptReport {
        var report = AttemptReport(attempt: attempt, outcome: outcome, status: status ?? outcome.failure?.status)
        report.transferred = transferred
        report.metrics = easy.metrics
        report.retryAfter = retryAfter
        return report
    }
}

extension TransferError {
    /// The error for a transfer that libcurl ended with `code` (and no verdict of its own);
    /// `moving` when bytes were flowing (a timeout then means a stall, not a failed connect);
    /// `socketError` when a socket could not be opened (no descriptor to spare: not the host's
    /// fault); `redirect` is the last Location the server sent, which is what an unsupported
    /// protocol refused. Retried exactly when the code's category is (`CurlCode.Category.isRetried`).
    init(_ code: CurlCode, detail: String?, socketError: Int32? = nil, moving: Bool, stallSeconds: Int,
         redirect: String? = nil) {
        let reason = detail ?? code.description
        if let socketError, Self.isDescriptorShortage(socketError) {
            self = .fdShortage("cannot open a socket: \(SystemError.describe(socketError))")
            return
        }
        switch code.category {
        case .tls: self = .tls(reason)
        case .unreachable: self = .unreachable(reason)
        // Only a redirect can lead a transfer to a protocol its job did not allow; without one,
        // libcurl's "unsupported protocol" is an answer without a status line (HTTP/0.9).
        case .request where code.isUnsupportedProtocol:
            self = redirect != nil || !(detail ?? "").contains("HTTP/0.9") ? .insecureRedirect(to: redirect)
                : .protocolViolation("the server answered without an HTTP status line (HTTP/0.9, which transferd does not accept)")
        case .network where code.isTimeout && moving: self = .stalled(seconds: stallSeconds)
        case .ok, .network: self = .network(reason)
        case .request, .otherProtocol, .unused: self = .request(reason)
        case .aborted, .local: self = .local(reason)
        }
    }
}
