import TransferEngine

/// `transferctl prune [--older-than DURATION] [--state S[,S]] [--batch B]`: deletes history.
struct PruneCommand: Subcommand {
    static let help = """
        usage: transferctl prune [--older-than DURATION] [--state STATE[,STATE]] [--batch B]

        Deletes ended jobs (completed, failed and cancelled, or the states of --state)
        that ended more than DURATION ago (default: any age), with their attempts, resume
        data, upload answers and hook runs, and prints how many (--json: {"pruned": N}).
        Unfinished jobs are never deleted. The jobs of a batch are pruned only once all of
        them have ended and its hook has run; a batch left without jobs is deleted. A
        pruned job is gone: list, show, retry and wait say 'no job N'. backup still skips
        the files it uploaded (what it remembers of them is kept). The daemon can prune
        by itself: see transferd --help.

        options:
          --older-than DURATION   only jobs that ended more than DURATION ago: whole numbers
                                  with s, m, h, d or w, e.g. 90s, 30m, 12h, 7d, 1d12h
          --state STATE[,STATE]   only jobs in these states: completed, failed, cancelled
          --batch B               only jobs of batch B

        examples:
          transferctl prune --older-than 30d
          transferctl prune --state failed,cancelled --older-than 7d
        """

    var request: ControlRequest

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> PruneCommand {
        var request = ControlRequest(.prune)
        if let text = try arguments.option("--older-than") {
            do { request.olderThan = try Age.parse(text, "--older-than").seconds } catch { throw UsageError(error.message) }
        }
        let words = try arguments.interleavedOptions("--state").flatMap { $0.value.split(separator: ",") }
        if !words.isEmpty {
            let states = try words.map { word throws(UsageError) in
                guard let state = JobState(rawValue: String(word)) else {
                    throw UsageError("unknown state '\(word)': use completed, failed or cancelled")
                }
                return state
            }
            // The daemon refuses an unfinished state too; say it before asking.
            do { _ = try PruneCriteria(states: states) } catch { throw UsageError(error.message) }
            request.states = states
        }
        request.batch = try arguments.batch()
        _ = try arguments.positionals().first.map { throw UsageError("prune takes no argument '\($0)'") }
        return PruneCommand(request: request)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let pruned = try context.send(request).pruned ?? 0
        if context.json {
            context.printJSON(PruneResult(pruned: pruned))
        } else {
            context.print("pruned \(pruned) \(pruned == 1 ? "job" : "jobs")")
        }
        return .success
    }

    /// `--json`: `{"pruned": N}`.
    private struct PruneResult: Encodable {
        var pruned: Int
    }
}
