import Dispatch
import Synchronization

/// Confines the job store to one serial queue, so the loop thread never waits on SQLite or fsync.
/// Work that arrives while the store is busy is committed together (group commit): its pieces
/// run one after the other in one transaction, and one COMMIT — one fsync — makes the whole
/// group durable before any of its completions run. Thousands of small jobs therefore cost a few
/// commits, not one each. A piece that fails (or a COMMIT that does) rolls the whole group back,
/// and each of its pieces runs again in a transaction of its own, so that each gets its own
/// answer. A failure (a refusal, a full disk) thus costs its group a commit per piece, and the
/// pieces that succeed, which are nearly all, need no savepoint each (its two statements were
/// ~6,000 instructions of a small download's ~680,000, `bench/instructions.sh`).
/// Work no transfer waits on to go on (`deferrable`: records of what already happened, a
/// running download's checkpoints) gathers a little longer, `gathering`, before its group
/// commits: each commit writes every page it changed again, and the records of many jobs share
/// their pages. What does wait on it (the end of a transfer whose checkpoint is on its way)
/// waits that much longer, once; a record a client waits for is not deferrable
/// (`StateRecord.awaited`).
/// Thread: any; work runs on the queue, completions where the caller says.
public final class StoreQueue: Sendable {
    /// How long deferrable work waits for more before its group commits, unless work that is
    /// waited on comes first (BENCHMARKS.md: a batch of 2,000 small downloads made 740–1,130
    /// fdatasync calls, most of them the store's commits, before; 510–680 after).
    static let gathering = DispatchTimeInterval.milliseconds(5)

    private let queue = DispatchQueue(label: "transferd.store")
    /// Set on `queue` only: what tells, in debug builds, that `sync` was called from the queue
    /// it would wait for (a deadlock that would otherwise hang silently).
    private static let onStoreQueue = DispatchSpecificKey<Bool>()
    /// Work waiting for the next group, and when its drain is due.
    private let pending = Mutex<(work: [Work], schedule: GatherSchedule)>(([], GatherSchedule()))
    // @unchecked: the store is only ever touched on `queue`.
    private let box: Box

    private final class Box: @unchecked Sendable {
        let store: JobStore
        init(_ store: JobStore) { self.store = store }
    }

    /// One piece of work: `run` does it in whichever transaction is open (its group's, or its
    /// own after the group failed) and returns what to call once that is committed; `failed`
    /// answers with why it could not be recorded.
    private struct Work: Sendable {
        let run: @Sendable (JobStore) throws -> @Sendable () -> Void
        let failed: @Sendable (any Error) -> Void
    }

    public init(_ store: JobStore) {
        box = Box(store)
        queue.setSpecific(key: Self.onStoreQueue, value: true)
    }

    /// Runs `work` on the store's queue as one atomic unit, then hands its result to `completion`
    /// (on that queue) once it is durable. `deferrable`: no transfer waits on it to go on, so
    /// its group may gather for `gathering` first.
    public func async<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T, deferrable: Bool = false,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let piece = Work(run: { store in
            let value = try work(store)
            return { completion(.success(value)) }
        }, failed: { error in completion(.failure(error)) })
        let due = pending.withLock { pending in
            pending.work.append(piece)
            return pending.schedule.add(deferrable: deferrable)
        }
        switch due {
        case .now?: queue.async { [self] in drain() }
        case .after(let window)?: queue.asyncAfter(deadline: .now() + Self.gathering) { [self] in drain(window: window) }
        case nil: break
        }
    }

    /// Runs `work` on the store's queue outside any group: `work` makes its own transaction
    /// (`JobStore.transactionWithoutForeignKeys`), which needs no transaction around it. It runs
    /// after every piece queued before it (deferrable ones are committed first, without waiting
    /// for their window); pieces queued after it may run first. `completion` runs on the store's
    /// queue.
    public func alone<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        queue.async { [self] in
            drain()
            completion(Result { try work(box.store) })
        }
    }

    /// Runs `work` and waits until it is durable. Never from the loop thread or the store's queue.
    public func sync<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T) throws -> T {
        assert(DispatchQueue.getSpecific(key: Self.onStoreQueue) != true, "StoreQueue.sync on the store's queue waits for itself")
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, any Error>?>(nil)
        async(work) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Commits the work waiting (deferrable work too, without its window) and waits up to
    /// `timeout` for that; false when the store did not answer in time. The daemon's last step.
    public func commitWaiting(within timeout: DispatchTimeInterval) -> Bool {
        let done = DispatchSemaphore(value: 0)
        async({ _ in }) { _ in done.signal() }
        return done.wait(timeout: .now() + timeout) == .success
    }

    /// Commits every piece waiting (a drain scheduled earlier may find them taken already); the
    /// timer of a gathering `window` whose work was taken does nothing.
    private func drain(window: Int? = nil) {
        let group = pending.withLock { pending -> [Work] in
            guard pending.schedule.drains(window: window) else { return [] }
            defer { pending.work.removeAll(keepingCapacity: true) }
            return pending.work
        }
        guard !group.isEmpty else { return }
        let store = box.store
        var finish: [@Sendable () -> Void] = []
        finish.reserveCapacity(group.count)
        do {
            try store.transaction { for piece in group { finish.append(try piece.run(store)) } }
        } catch {
            // A piece failed, or the group could not commit (or begin): nothing of it is
            // recorded. Each piece runs again in a transaction of its own, so each gets its own
            // answer.
            finish = group.map { piece in
                do {
                    return try store.transaction { try piece.run(store) }
                } catch {
                    return { piece.failed(error) }
                }
            }
        }
        for completion in finish { completion() }
    }
}
