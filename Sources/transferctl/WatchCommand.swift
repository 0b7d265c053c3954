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
        // Subscribe first, then read the jobs, so that no change falls in between.
        let client = try ControlClient(socketPath: context.global.paths.socket)
        _ = try client.send(ControlRequest(.events, follow: true))
        var board = ProgressBoard(interactive: isatty(1) != 0)
        for job in try context.send(ControlRequest(.list, batch: batch)).jobs ?? [] where watches(job.id, batch: job.batch) {
            board.update(job)
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

    private func watches(_ job: JobID, batch jobBatch: Int64?) -> Bool {
        if let id { return job == id }
        if let batch { return jobBatch == batch }
        return true
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
