#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// `transferctl watch [ID | --batch B]`: live progress from the event stream.
struct WatchCommand: Subcommand {
    static let help = """
        usage: transferctl watch [ID | --batch B]

        Shows live progress: a line per job (name, bar, percent, bytes, rate, ETA, state)
        and a totals line, redrawn in place and fitted to the terminal: as it narrows the bar
        goes first, then the bytes; rows that do not fit the screen are summed up in one line.
        A finished job shows its average rate and how long it took. Without arguments it shows
        the unfinished jobs and those that ended in the last 5 minutes. It follows the daemon's
        event stream (no polling). With an ID, it exits when that job ends; with --batch B,
        when the batch has ended (at once if it already has, or has no jobs; jobs added to it
        meanwhile are shown too). Ctrl-C exits at any time. When stdout is not a terminal it
        prints plain lines, at most once a second, never cut to a width.

        examples:
          transferctl watch
          transferctl watch 3
          transferctl watch --batch 2
        """

    var id: JobID?
    var batch: Int64?
    /// Without an id or a batch: jobs that ended longer ago are not shown.
    static let recentlyEnded: Int64 = 5 * 60 * 1000

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> WatchCommand {
        let batch = try arguments.batch()
        let ids = try arguments.jobIDs()
        guard ids.count <= 1 else { throw UsageError("watch takes at most one job id") }
        return WatchCommand(id: ids.first, batch: batch)
    }

    func run(_ context: Context) throws -> ExitStatus {
        // Subscribe first, then read the jobs, so that no change falls in between.
        let client = try ControlClient(socketPath: context.global.paths.socket)
        _ = try client.send(ControlRequest(.events, follow: true))
        var board = ProgressBoard(interactive: isatty(1) != 0)
        let listed = ControlRequest(.list, batch: batch, limit: batch == nil ? nil : NumericLimits.pageSize.range.upperBound)
        let now = Timestamp.now
        for job in (try context.send(listed).jobs ?? []).sorted(by: { $0.id < $1.id }) where watches(job, now: now) {
            board.update(job)
        }
        // A batch that has ended (or has no jobs) has nothing more to show.
        if let batch, let shown = try context.send(ControlRequest(.batchShow, batch: batch)).batches?.first,
           shown.state.hasEnded {
            return board.finish()
        }
        if let id, !board.knows(id) {
            // Not among the newest jobs `list` returns: ask for it (an unknown id fails here).
            guard let job = try context.send(ControlRequest(.show, ids: [id])).job else {
                throw CommandFailure(message: "no job \(id)", status: .failure)
            }
            board.update(job)
        }
        Interrupt.exitCleanly()
        board.draw(force: true)
        if let id, board.hasEnded(id) { return board.finish() }
        while true {
            let next = Result { () throws(ControlClient.Failure) in try client.receive() }
            guard case .success(let response) = next, let event = response.event else {
                if case .failure(.connectionClosed) = next { return board.finish() }
                if case .failure(let failure) = next { throw failure }
                continue
            }
            if let batch, event.type == .batchEnded, event.batch == batch { return board.finish() }
            // Jobs created later join the board when they are in the batch watched (or all are).
            guard let job = event.job, board.knows(job) || (id == nil && (batch == nil || event.batch == batch)) else {
                continue
            }
            if !board.knows(job), let added = try? context.send(ControlRequest(.show, ids: [job])).job {
                board.update(added)
            }
            board.apply(event)
            board.draw(force: event.type == .state)
            if let id, board.hasEnded(id) { return board.finish() }
        }
    }

    private func watches(_ job: Job, now: Timestamp) -> Bool {
        if let id { return job.id == id }
        if let batch { return job.batch == batch }
        return !job.state.hasEnded || (job.finishedAt.map { now.rawValue - $0.rawValue < Self.recentlyEnded } ?? false)
    }
}

/// Ctrl-C leaves the terminal on a fresh line and exits 0.
enum Interrupt {
    static func exitCleanly() {
        signal(SIGINT) { _ in
            _ = write(1, "\n", 1)
            _exit(0)
        }
    }
}
