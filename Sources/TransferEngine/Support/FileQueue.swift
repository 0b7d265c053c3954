import Dispatch

/// Serial queue for fdatasync, truncate, rename and unlink of partial files: keeps each job's
/// durability steps in order and off the loop thread.
public final class FileQueue: Sendable {
    private let queue = DispatchQueue(label: "transferd.files")

    public init() {}

    public func async(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}
