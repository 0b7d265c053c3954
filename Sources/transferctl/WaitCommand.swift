#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// `transferctl wait ID... [--timeout S] [--progress]`: block until the jobs have ended.
struct WaitCommand: Subcommand {
    static let help = """
        usage: transferctl wait ID... | --batch B | --all [--timeout SECONDS] [--progress]

        Blocks until every named job has ended. Exit 0 when all completed, 1 when any failed
        or was cancelled, 124 when the timeout expired first. With --progress, while it
        waits it draws one line on stderr (bar, percent, bytes, rate, ETA, jobs ended),
        redrawn in place from the daemon's event stream, when stderr is a terminal; nothing
        otherwise.

        examples:
          id=$(transferctl download https://example.com/f -o /tmp/f) && transferctl wait "$id"
          transferctl wait --batch 3 --progress
        """

    var request: ControlRequest
    var timeout: Double?
    var progress = false

    /// A wait for every job of `batch` (`batch submit --wait`).
    init(batch: Int64) {
        request = ControlRequest(.wait, batch: batch)
    }

    private init(request: ControlRequest, timeout: Double?, progress: Bool) {
        self.request = request
        self.timeout = timeout
        self.progress = progress
    }

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> WaitCommand {
        var timeout: Double?
        if let text = try arguments.option("--timeout") {
            // Fractions allowed; at most the longest timeout (NumericLimits.timeoutSeconds).
            let longest = NumericLimits.timeoutSeconds.range.upperBound
            guard let seconds = Double(text), (0...Double(longest)).contains(seconds) else {
                throw UsageError("--timeout needs seconds from 0 to \(longest), got '\(text)'")
            }
            timeout = seconds
        }
        let all = arguments.flag("--all")
        let batch = try arguments.batch()
        let progress = arguments.flag("--progress")
        let ids = try arguments.jobIDs()
        guard all || batch != nil || !ids.isEmpty else { throw UsageError("wait needs job ids, --all or --batch") }
        return WaitCommand(request: ControlRequest(.wait, ids: ids.isEmpty ? nil : ids, all: all ? true : nil, batch: batch),
                           timeout: timeout, progress: progress)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response: ControlResponse
        do {
            if progress && isatty(2) != 0 {
                response = try waitDrawing(context)
            } else {
                // Printing how each job ended needs no more of it than that (`brief`), and
                // of the many that completed only their ids (`ranges`).
                var request = request
                request.brief = context.json ? nil : true
                request.ranges = request.brief
                response = try context.send(request, timeout: timeout)
            }
        } catch ControlClient.Failure.timedOut {
            throw CommandFailure(message: "timed out after \(timeout ?? 0) s; the jobs are still going", status: .timeout)
        }
        let outcomes = JobOutcome.all(in: response) ?? (response.jobs ?? []).map(JobOutcome.init)
        if context.json {
            context.printJSON(response.jobs ?? [])
        } else {
            context.print(lines: outcomes.sorted(by: { $0.id < $1.id }).map(JobFormatter.outcome))
        }
        let unsuccessful = outcomes.filter { $0.state != .completed }
        guard unsuccessful.isEmpty else {
            let list = unsuccessful.map { "job \($0.id) \($0.state.rawValue)" }.joined(separator: ", ")
            throw CommandFailure(message: list, status: .failure)
        }
        return .success
    }

    /// The wait, pending on a connection of its own, while the event stream redraws the
    /// progress line; the line is ended before anything else is printed.
    private func waitDrawing(_ context: Context) throws -> ControlResponse {
        let scope: ProgressFeed.Scope = if let ids = request.ids { .jobs(Set(ids)) }
            else if let batch = request.batch { .batch(batch) } else { .unfinished }
        var feed = try ProgressFeed(context: context, scope: scope, board: ProgressBoard(interactive: true, output: .standardError),
                                    listLimit: NumericLimits.pageSize.range.upperBound)
        let waiter = try ControlClient(socketPath: context.global.paths.socket)
        try waiter.post(request)
        Interrupt.endProgressLine()
        defer {
            feed.board.endLine()
            signal(SIGINT, SIG_DFL)
        }
        feed.board.drawLine(force: true)
        let deadline = timeout.map { Monotonic.now + $0 }
        var following = true
        while true {
            let remaining = deadline.map { max(0, $0 - Monotonic.now) }
            let clients = following ? [waiter, feed.events] : [waiter]
            switch ControlClient.firstReadable(clients, timeout: remaining) {
            case 0?:
                // The answer may overtake the last events on the other connection: the jobs it
                // carries, ended, are drawn last.
                let response = try context.checked(waiter.receive())
                for job in response.jobs ?? [] where feed.board.knows(job.id) { feed.board.update(job) }
                feed.board.drawLine(force: true)
                return response
            case 1?:
                switch Result(catching: { () throws(ControlClient.Failure) in try feed.events.receive() }) {
                case .success(let response):
                    if let event = response.event, feed.apply(event, context: context) {
                        feed.board.drawLine(force: event.type == .state)
                    }
                case .failure:
                    following = false  // the stream ended (the daemon dropped a slow reader): wait on
                }
            default:
                throw ControlClient.Failure.timedOut
            }
        }
    }
}
