import TransferEngine

/// The jobs a progress display follows, kept current from the daemon's event stream (no
/// polling): what `watch` draws, and `wait --progress`.
struct ProgressFeed {
    enum Scope {
        /// These jobs (an unknown id fails).
        case jobs(Set<JobID>)
        /// The batch's jobs, and jobs added to it later.
        case batch(Int64)
        /// Every unfinished job and those that ended less than this many milliseconds ago,
        /// and jobs created later.
        case recent(endedWithin: Int64)
        /// The jobs that have not ended now (what `wait --all` waits for).
        case unfinished
    }

    /// The event subscription.
    let events: ControlClient
    let scope: Scope
    var board: ProgressBoard

    /// Subscribes first, then reads the jobs, so that no change falls in between. `listLimit`
    /// bounds the jobs read at once (the daemon's default page when nil).
    init(context: Context, scope: Scope, board: ProgressBoard, listLimit: Int? = nil) throws {
        self.scope = scope
        self.board = board
        events = try ControlClient(socketPath: context.global.paths.socket)
        _ = try context.checked(events.send(ControlRequest(.events, follow: true)))
        var request = ControlRequest(.list)
        if case .batch(let batch) = scope { request.batch = batch }
        request.limit = listLimit
        let now = Timestamp.now
        for job in (try context.send(request).jobs ?? []).sorted(by: { $0.id < $1.id }) where follows(job, now: now) {
            self.board.update(job)
        }
        guard case .jobs(let ids) = scope else { return }
        for id in ids.sorted() where !self.board.knows(id) {
            // Not among the newest jobs `list` returns: ask for it (an unknown id fails here).
            guard let job = try context.send(ControlRequest(.show, ids: [id])).job else {
                throw CommandFailure(message: "no job \(id)", status: .failure)
            }
            self.board.update(job)
        }
    }

    /// Applies an event to the board; false when it concerns no job followed. A job that joins
    /// the scope (created in the batch, or at all) is read and added first.
    mutating func apply(_ event: TransferEvent, context: Context) -> Bool {
        guard let job = event.job, board.knows(job) || joins(event) else { return false }
        if !board.knows(job), let added = try? context.send(ControlRequest(.show, ids: [job])).job {
            board.update(added)
        }
        board.apply(event)
        return true
    }

    private func follows(_ job: Job, now: Timestamp) -> Bool {
        switch scope {
        case .jobs(let ids): ids.contains(job.id)
        case .batch(let batch): job.batch == batch
        case .recent(let window):
            !job.state.hasEnded || (job.finishedAt.map { now.rawValue - $0.rawValue < window } ?? false)
        case .unfinished: !job.state.hasEnded
        }
    }

    private func joins(_ event: TransferEvent) -> Bool {
        switch scope {
        case .jobs, .unfinished: false
        case .batch(let batch): event.batch == batch
        case .recent: true
        }
    }
}
