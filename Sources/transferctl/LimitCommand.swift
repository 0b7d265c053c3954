import TransferEngine

/// `transferctl limit`: show or change bandwidth limits while transfers run.
struct LimitCommand: Subcommand {
    static let help = """
        usage: transferctl limit                              show the limits in force
               transferctl limit [--down RATE] [--up RATE]    change the global limits
               transferctl limit --schedule 'TIMETABLE'        set a timetable (--no-schedule removes it)
               transferctl limit ID RATE                      change one job's limit

        RATE is bytes per second with an optional K, M or G (powers of 1024): 512K, 4M, 1.5M;
        0 or off means unlimited. Running transfers follow within a second; limits persist
        across restarts. A timetable is a list of entries separated by ';', the first that
        matches the local time wins: optional days (Mon-Fri, Sat,Sun, *), an optional time
        range (HH:MM-HH:MM), then 'off' or down=RATE / up=RATE. Directions an entry leaves out,
        and times no entry matches, use the global limits.

        examples:
          transferctl limit --down 4M
          transferctl limit 7 512K
          transferctl limit --schedule 'Mon-Fri 08:00-18:00 down=1M up=512K; * off'
        """

    var request: ControlRequest

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> LimitCommand {
        var request = ControlRequest(.limit)
        request.down = try arguments.option("--down").map(bytesPerSecond)
        request.up = try arguments.option("--up").map(bytesPerSecond)
        if let schedule = try arguments.option("--schedule") {
            do { _ = try LimitSchedule.parse(schedule) } catch { throw UsageError(error.message) }
            request.schedule = schedule
        }
        if arguments.flag("--no-schedule") { request.schedule = "" }
        let positionals = try arguments.positionals()
        switch positionals.count {
        case 0:
            break
        case 2:
            guard let id = JobID(positionals[0]) else { throw UsageError("'\(positionals[0])' is not a job id") }
            guard request.down == nil, request.up == nil, request.schedule == nil else {
                throw UsageError("limit ID RATE takes no --down, --up or --schedule")
            }
            request.ids = [id]
            request.rate = try bytesPerSecond(positionals[1])
        default:
            throw UsageError("limit takes no argument, or a job id and a rate (see transferctl limit --help)")
        }
        return LimitCommand(request: request)
    }

    /// 0 stands for unlimited on the wire.
    private static func bytesPerSecond(_ text: String) throws -> Int64 {
        do { return try Rate.parse(text) ?? 0 } catch { throw UsageError(error.message) }
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response = try context.send(request)
        if let job = response.job {
            if context.json { context.printJSON(job) } else { context.print("job \(job.id): limit \(Rate.describe(job.limit))") }
        } else if let stats = response.stats {
            if context.json {
                context.printJSON(stats)
            } else {
                context.print("down: \(Rate.describe(stats.limits.down)), up: \(Rate.describe(stats.limits.up))")
                if let schedule = stats.schedule {
                    context.print("timetable: \(schedule)")
                    context.print("in force: \(stats.scheduleEntry ?? "no entry (global limits apply)")")
                }
            }
        }
        return .success
    }
}
