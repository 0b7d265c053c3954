import Dispatch
import Synchronization

/// Threads for blocking work that may run side by side (opening attempts' files, verifying
/// finished downloads' sha256, a finishing group's fdatasyncs, completion hooks). fsyncs of
/// different files overlap on the device — 64 small files take ~250 ms one after another here
/// and ~8 ms 16 at a time — but the global dispatch queue runs only about one thread per core. Each of these serial
/// queues gets a thread of its own when it has work. Thread: any.
public final class SyncPool: Sendable {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    public init(width: Int = 16) {
        queues = (0..<width).map { DispatchQueue(label: "transferd.sync.\($0)") }
    }

    public func async(_ work: @escaping @Sendable () -> Void) {
        let index = next.add(1, ordering: .relaxed).oldValue
        queues[index % queues.count].async(execute: work)
    }

    /// Runs `work` on the thread of `key`: work of one key runs one at a time, in order. Files
    /// created in one directory take its lock in turn anyway; threads racing for it only spin.
    public func async(key: some Hashable, _ work: @escaping @Sendable () -> Void) {
        var hasher = Hasher()
        hasher.combine(key)
        queues[Int(UInt(bitPattern: hasher.finalize()) % UInt(queues.count))].async(execute: work)
    }
}
