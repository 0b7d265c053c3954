import TransferEngine

/// `transferctl stats`: the daemon's version, jobs by state, rates and limits.
struct StatsCommand: Subcommand {
    static let help = """
        usage: transferctl stats

        Shows the daemon's version, jobs by state, and current global rates and limits.
        """

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> StatsCommand {
        _ = try arguments.positionals().first.map { throw UsageError("stats takes no argument '\($0)'") }
        return StatsCommand()
    }

    func run(_ context: Context) throws -> ExitStatus {
        guard let stats = try context.send(ControlRequest(.stats)).stats else {
            throw CommandFailure(message: "the daemon sent no stats", status: .failure)
        }
        if context.json {
            context.printJSON(stats)
        } else {
            context.print("transferd \(stats.version) (pid \(stats.pid)) on \(stats.stateDirectory)")
            let counts = JobState.allCases.map { "\($0.rawValue) \(stats.jobs[$0.rawValue] ?? 0)" }
            context.print("jobs: " + counts.joined(separator: ", "))
            context.print("rate: down \(Rate.describe(stats.rates.down ?? 0)), up \(Rate.describe(stats.rates.up ?? 0))")
            context.print("limits: down \(Rate.describe(stats.limits.down)), up \(Rate.describe(stats.limits.up)); \(stats.maxActive) transfers at once"
                + (stats.maxPerHost.map { ", \($0) per host" } ?? ""))
            if let schedule = stats.schedule {
                context.print("timetable: \(schedule); in force: \(stats.scheduleEntry ?? "no entry")")
            }
        }
        return .success
    }
}
