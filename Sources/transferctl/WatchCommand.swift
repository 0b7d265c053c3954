#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// `transferctl watch [ID | --batch B]`: live progress from the event stream.
struct WatchCommand: Subcommand {
    static let help = """
        usage: transferctl watch [ID | --batch B]

        Shows live progress: a line per job (name, bar, percent, bytes, rate, ETA, state)
        and a totals line, redrawn in place and fitted to the terminal's width. It follows
        the daemon's event stream (no polling). With an ID, it exits when that job ends; with
        --batch B, when the batch's last job ends (jobs added to it meanwhile are shown too).
        Ctrl-C exits at any time. When stdout is not a terminal it prints plain lines, at most one a
        second.

        examples:
          transferctl watch
          transferctl watch 3
          transferctl watch --batch 2
        """

    var id: JobID?
    var batch: Int64?

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> WatchCommand {
        let batch = try arguments.batch()
        let ids = try arguments.jobIDs()
        guard ids.count <= 1 else { throw UsageError("watch takes at most one job id") }
        return WatchCommand(id: ids.first, batch: batch)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let scope: ProgressFeed.Scope = if let id { .jobs([id]) } else if let batch { .batch(batch) } else { .all }
        var feed = try ProgressFeed(context: context, scope: scope, board: ProgressBoard(interactive: isatty(1) != 0))
        Interrupt.exitCleanly()
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
