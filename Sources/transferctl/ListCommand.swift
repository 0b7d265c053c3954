import TransferEngine

/// `transferctl list [--state S] [--batch B] [-q]`: jobs, newest first.
struct ListCommand: Subcommand {
    static let help = """
        usage: transferctl list [--state STATE] [--batch B] [--limit N] [--before ID] [-q]

        Lists jobs, newest first (at most N, default 1000). STATE is queued, running,
        paused, waiting, completed, failed or cancelled. --before ID lists the jobs older
        than ID: the next page after a page that ended at ID. -q (--quiet) prints only
        the job ids, one a line.

        examples:
          transferctl list
          transferctl list --state failed --json
          transferctl retry $(transferctl list --state failed -q)
        """

    var request: ControlRequest
    var quiet = false

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> ListCommand {
        var request = ControlRequest(.list)
        if let text = try arguments.option("--state") {
            guard let state = JobState(rawValue: text) else {
                throw UsageError("unknown state '\(text)': use \(JobState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            request.state = state
        }
        request.batch = try arguments.batch()
        request.limit = try arguments.number("--limit", NumericLimits.pageSize)
        if let text = try arguments.option("--before") {
            guard let id = JobID(text) else { throw UsageError("--before needs a job id, got '\(text)'") }
            request.before = id
        }
        let quiet = arguments.flag("-q", "--quiet")
        _ = try arguments.positionals().first.map { throw UsageError("list takes no argument '\($0)'") }
        return ListCommand(request: request, quiet: quiet)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let jobs = try context.send(request).jobs ?? []
        if quiet {
            context.print(lines: jobs.map(\.id.description))
        } else if context.json {
            context.printJSON(jobs)
        } else {
            context.print(lines: JobFormatter.table(jobs))
            if let last = jobs.last, jobs.count == request.limit ?? 1000 {
                Context.note("more: transferctl list --before \(last.id)")
            }
        }
        return .success
    }
}
