import FoundationEssentials
import TransferEngine

/// `transferctl events [--follow]`: what the daemon did, one line an event.
struct EventsCommand: Subcommand {
    static let help = """
        usage: transferctl events [-f|--follow] [--job ID]... [--batch B] [--type T[,T...]]... [--json]

        Prints the daemon's most recent events (job created, state changes with their reason,
        attempts started and finished with their timings, retries scheduled, limits changed,
        hooks, batches); with --follow, keeps printing new ones until interrupted.
        --json prints one JSON object a line, each with "type", "time" and, for a job, "job"
        (and "batch" when the job is in one).

        options:
          -f, --follow     keep printing new events
          --job ID         only this job's events (repeatable)
          --batch B        only batch B's events and its jobs'
          --type T         only events of type T (repeatable, or comma-separated): job_created,
                           state, attempt_started, attempt_finished, progress, retry_scheduled,
                           limit_changed, batch_created, batch_ended, hook. Progress events
                           (several a second per running job) come only when asked for.

        examples:
          transferctl events --follow
          transferctl events --follow --batch 2 --type state,batch_ended
          transferctl events --follow --job 7 --type progress --json
        """

    var request: ControlRequest

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> EventsCommand {
        let follow = arguments.flag("-f", "--follow")
        let jobs = try arguments.options("--job").map { text throws(UsageError) in
            guard let id = JobID(text) else { throw UsageError("--job needs a job id, got '\(text)'") }
            return id
        }
        let batch = try arguments.batch()
        var types: [TransferEvent.Kind] = []
        for text in try arguments.options("--type").flatMap({ $0.split(separator: ",").map(String.init) }) {
            guard let type = TransferEvent.Kind(rawValue: text) else {
                let known = TransferEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError("unknown event type '\(text)': use \(known)")
            }
            types.append(type)
        }
        _ = try arguments.positionals().first.map { throw UsageError("events takes no argument '\($0)'") }
        var request = ControlRequest(.events, ids: jobs.isEmpty ? nil : jobs, batch: batch, follow: follow ? true : nil)
        request.types = types.isEmpty ? TransferEvent.Kind.allCases.filter { $0 != .progress } : types
        return EventsCommand(request: request)
    }

    var follow: Bool { request.follow == true }

    func run(_ context: Context) throws -> ExitStatus {
        let client = try ControlClient(socketPath: context.global.paths.socket)
        let first = try client.send(request)
        for event in first.events ?? [] { print(event, context) }
        guard follow else { return .success }
        while true {
            let next: Result<ControlResponse, ControlClient.Failure> = Result { () throws(ControlClient.Failure) in
                try client.receive()
            }
            switch next {
            case .success(let response):
                if let event = response.event { print(event, context) }
            case .failure(.connectionClosed):
                return .success  // the daemon stopped
            case .failure(let failure):
                throw failure
            }
        }
    }

    private func print(_ event: TransferEvent, _ context: Context) {
        if context.json {
            context.printJSONLine(event)
        } else {
            context.print(EventFormatter.line(event))
        }
    }
}

/// One human line per event.
enum EventFormatter {
    static func line(_ event: TransferEvent) -> String {
        var parts = [event.time.iso8601]
        if let job = event.job { parts.append("job \(job)") }
        if event.job == nil, let batch = event.batch { parts.append("batch \(batch)") }
        switch event.type {
        case .jobCreated:
            parts.append("created" + (event.reason.map { ": \($0)" } ?? ""))
        case .jobModified:
            parts.append("modified" + (event.reason.map { ": \($0)" } ?? ""))
        case .state:
            var text = "\(event.from?.rawValue ?? "?") -> \(event.state?.rawValue ?? "?")"
            if let reason = event.reason { text += " (\(reason))" }
            parts.append(text)
        case .attemptStarted:
            parts.append("attempt \(event.attempt ?? 0) started at byte \(event.bytesDone ?? 0)")
        case .attemptFinished:
            var text = "attempt \(event.attempt ?? 0) finished"
            if let status = event.httpStatus { text += ", HTTP \(status)" }
            text += ", \(ByteCount.describe(event.bytesDone ?? 0))"
            if let error = event.error { text += ", \(error.code): \(error.message)" }
            parts.append(text)
        case .progress:
            let total = event.bytesTotal.map { " of \(ByteCount.describe($0))" } ?? ""
            parts.append("\(ByteCount.describe(event.bytesDone ?? 0))\(total) at \(Rate.describe(event.rate ?? 0))")
        case .retryScheduled:
            parts.append("retry at \(event.nextAttemptAt?.iso8601 ?? "?")" + (event.error.map { " after \($0.code)" } ?? ""))
        case .limitChanged:
            if let limits = event.limits {
                parts.append("limits down \(Rate.describe(limits.down)), up \(Rate.describe(limits.up))")
            } else {
                parts.append("limit \(Rate.describe(event.limit))")
            }
        case .batchCreated:
            parts.append("batch created" + (event.reason.map { ": \($0)" } ?? ""))
        case .batchEnded:
            parts.append("batch ended \(event.batchState?.rawValue ?? "?")")
        case .hook:
            parts.append("hook " + (event.reason ?? ""))
        case .pruned:
            parts.append("pruned \(event.count ?? 0) jobs" + (event.reason.map { " (\($0))" } ?? ""))
        }
        return parts.joined(separator: "  ")
    }
}
