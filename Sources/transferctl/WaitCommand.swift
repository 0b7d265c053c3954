import TransferEngine

/// `transferctl wait ID... [--timeout S]`: block until the jobs have ended.
struct WaitCommand: Subcommand {
    static let help = """
        usage: transferctl wait ID... | --batch B | --all [--timeout SECONDS]

        Blocks until every named job has ended. Exit 0 when all completed, 1 when any failed
        or was cancelled, 124 when the timeout expired first.

        example:
          id=$(transferctl download https://example.com/f -o /tmp/f) && transferctl wait "$id"
        """

    var request: ControlRequest
    var timeout: Double?

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
        let ids = try arguments.jobIDs()
        guard all || batch != nil || !ids.isEmpty else { throw UsageError("wait needs job ids, --all or --batch") }
        return WaitCommand(request: ControlRequest(.wait, ids: ids.isEmpty ? nil : ids, all: all ? true : nil, batch: batch),
                           timeout: timeout)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response: ControlResponse
        do {
            response = try context.send(request, timeout: timeout)
        } catch ControlClient.Failure.timedOut {
            throw CommandFailure(message: "timed out after \(timeout ?? 0) s; the jobs are still going", status: .timeout)
        }
        let jobs = response.jobs ?? []
        if context.json {
            context.printJSON(jobs)
        } else {
            for job in jobs.sorted(by: { $0.id < $1.id }) { context.print(JobFormatter.outcome(job)) }
        }
        let unsuccessful = jobs.filter { $0.state != .completed }
        guard unsuccessful.isEmpty else {
            let list = unsuccessful.map { "job \($0.id) \($0.state.rawValue)" }.joined(separator: ", ")
            throw CommandFailure(message: list, status: .failure)
        }
        return .success
    }
}
