import Dispatch
import Synchronization

/// Confines the job store to one serial queue, so the loop thread never waits on SQLite or fsync.
/// Work that arrives while the store is busy is committed together (group commit): each piece
/// runs in its own savepoint, and one COMMIT — one fsync — makes the whole group durable before
/// any of its completions run. Thousands of small jobs therefore cost a few commits, not one each.
/// Thread: any; work runs on the queue, completions where the caller says.
public final class StoreQueue: Sendable {
    private let queue = DispatchQueue(label: "transferd.store")
    /// Set on `queue` only: what tells, in debug builds, that `sync` was called from the queue
    /// it would wait for (a deadlock that would otherwise hang silently).
    private static let onStoreQueue = DispatchSpecificKey<Bool>()
    /// Work waiting for the next group; a drain is scheduled when the first piece arrives.
    private let pending = Mutex<[Work]>([])
    // @unchecked: the store is only ever touched on `queue`.
    private let box: Box

    private final class Box: @unchecked Sendable {
        let store: JobStore
        init(_ store: JobStore) { self.store = store }
    }

    /// One piece of work: runs in its savepoint (or alone) and returns what to call once that is
    /// committed.
    private typealias Work = @Sendable (JobStore) -> @Sendable () -> Void

    public init(_ store: JobStore) {
        box = Box(store)
        queue.setSpecific(key: Self.onStoreQueue, value: true)
    }

    /// Runs `work` on the store's queue as one atomic unit, then hands its result to `completion`
    /// (on that queue) once it is durable.
    public func async<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let piece: Work = { store in
            let result = Result { try store.savepoint { try work(store) } }
            return { completion(result) }
        }
        let first = pending.withLock { work in
            work.append(piece)
            return work.count == 1
        }
        if first { queue.async { [self] in drain() } }
    }

    /// Runs `work` on the store's queue outside any group: `work` makes its own transaction
    /// (`JobStore.transactionWithoutForeignKeys`), which needs no transaction around it. It runs
    /// after every piece queued before it; pieces queued after it may run first. `completion`
    /// runs on the store's queue.
    public func alone<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        queue.async { [box] in completion(Result { try work(box.store) }) }
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

    private func drain() {
        let group = pending.withLock { work in
            defer { work.removeAll(keepingCapacity: true) }
            return work
        }
        let store = box.store
        var finish: [@Sendable () -> Void] = []
        finish.reserveCapacity(group.count)
        do {
            try store.transaction { for piece in group { finish.append(piece(store)) } }
        } catch {
            // The group could not commit (or begin): nothing of it is recorded. Each piece runs
            // again on its own, so each gets its own answer.
            finish = group.map { piece in piece(store) }
        }
        for completion in finish { completion() }
    }
}
