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
        let scope: ProgressFeed.Scope = if let id { .jobs([id]) } else if let batch { .batch(batch) } else {
            .recent(endedWithin: Self.recentlyEnded)
        }
        var feed = try ProgressFeed(context: context, scope: scope, board: ProgressBoard(interactive: isatty(1) != 0),
                                    listLimit: batch == nil ? nil : NumericLimits.pageSize.range.upperBound)
        Interrupt.exitCleanly()
        // A batch that has ended (or has no jobs) has nothing more to show.
        if let batch, let shown = try context.send(ControlRequest(.batchShow, batch: batch)).batches?.first,
           shown.state.hasEnded {
            return feed.board.finish()
        }
        feed.board.draw(force: true)
        if let id, feed.board.hasEnded(id) { return feed.board.finish() }
        while true {
            let next = Result { () throws(ControlClient.Failure) in try feed.events.receive() }
            guard case .success(let response) = next, let event = response.event else {
                if case .failure(.connectionClosed) = next { return feed.board.finish() }
                if case .failure(let failure) = next { throw failure }
                continue
            }
            if let batch, event.type == .batchEnded, event.batch == batch { return feed.board.finish() }
            guard feed.apply(event, context: context) else { continue }
            feed.board.draw(force: event.type == .state)
            if let id, feed.board.hasEnded(id) { return feed.board.finish() }
        }
    }
}
