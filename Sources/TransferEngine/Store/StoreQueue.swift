import Dispatch

/// Confines the job store to one serial queue, so the loop thread never waits on SQLite or fsync.
/// Thread: any; work runs on the queue, completions where the caller says.
public final class StoreQueue: Sendable {
    private let queue = DispatchQueue(label: "transferd.store")
    // @unchecked: the store is only ever touched on `queue`.
    private let box: Box

    private final class Box: @unchecked Sendable {
        let store: JobStore
        init(_ store: JobStore) { self.store = store }
    }

    public init(_ store: JobStore) { box = Box(store) }

    /// Runs `work` on the store's queue, then hands its result to `completion` (on that queue).
    public func async<T: Sendable>(_ work: @escaping @Sendable (JobStore) throws -> T,
                                   completion: @escaping @Sendable (Result<T, any Error>) -> Void) {
        queue.async { [box] in completion(Result { try work(box.store) }) }
    }

    /// Runs `work` and waits for it. Never from the loop thread.
    public func sync<T>(_ work: (JobStore) throws -> T) throws -> T {
        try queue.sync { try work(box.store) }
    }
}

/// Serial queue for fdatasync, truncate, rename and unlink of partial files: keeps each job's
/// durability steps in order and off the loop thread.
public final class FileQueue: Sendable {
    private let queue = DispatchQueue(label: "transferd.files")

    public init() {}

    public func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}
