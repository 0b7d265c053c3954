import TransferEngine

/// `pause`, `resume`, `cancel`, `retry`: move jobs to another state.
struct TransitionCommand: Subcommand {
    static let help = """
        usage: transferctl pause ID... | --all | --batch B
               transferctl resume ID... | --all | --batch B
               transferctl cancel ID... | --batch B
               transferctl retry ID... | --batch B

        pause   stops running transfers within a second, keeping their bytes
        resume  continues paused jobs (and skips the wait of a job waiting to retry)
        cancel  stops and forgets jobs; partial data is removed
        retry   queues failed jobs again

        Pausing a paused job, or resuming a queued or running one, changes nothing and
        succeeds (exit 0) with a note. A job whose state does not allow the change is refused
        (exit 1).

        examples:
          transferctl pause 3 4
          transferctl resume --all
        """

    var command: ControlCommand
    var request: ControlRequest

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> TransitionCommand {
        guard let command = ControlCommand(rawValue: name) else { throw UsageError("unknown command '\(name)'") }
        let takesAll = command != .cancel && command != .retry
        if !takesAll { try arguments.refuse("--all", "\(name) --all is not allowed: name the jobs") }
        let all = takesAll && arguments.flag("--all")
        let batch = try arguments.batch()
        let ids = try arguments.jobIDs()
        guard all || batch != nil || !ids.isEmpty else {
            throw UsageError("\(name) needs job ids\(takesAll ? ", --all" : "") or --batch")
        }
        guard ids.isEmpty || (!all && batch == nil) else { throw UsageError("give job ids or --all/--batch, not both") }
        return TransitionCommand(command: command,
                                 request: ControlRequest(command, ids: ids.isEmpty ? nil : ids, all: all ? true : nil, batch: batch))
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response = try context.send(request)
        let jobs = response.jobs ?? []
        if context.json {
            context.printJSON(jobs + (response.unchanged ?? []))
        } else {
            let verb = ["pause": "paused", "resume": "resumed", "cancel": "cancelled", "retry": "queued again"][command.rawValue] ?? command.rawValue
            context.print(lines: jobs.map { "job \($0.id) \(verb)" }
                + (response.unchanged ?? []).map { "job \($0.id) is already \($0.state.rawValue); nothing to do" })
        }
        return .success
    }
}
