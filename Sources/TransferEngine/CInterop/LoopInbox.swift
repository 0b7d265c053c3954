import CTransferSupport
import Synchronization

/// The only way into the loop thread from other threads: a mutex-guarded queue of work plus
/// `uv_async_send` (which coalesces, so each wake-up drains everything).
/// Thread: `post` from any thread; `init`, `close` and the work itself on the loop thread.
public final class LoopInbox<Context>: Sendable {
    public typealias Work = @Sendable (Context) -> Void

    private let queue = WorkQueue()
    private let handle: AsyncHandle

    /// `context` is asked on the loop thread for the object each work item receives.
    public init(loop: UVLoop, context: @escaping () -> Context?) {
        let pointer = UVHandleMemory.allocate(uv_async_t.self)
        handle = AsyncHandle(pointer: pointer, drain: Unmanaged.passRetained(AsyncDrain { [queue] in
            guard let target = context() else { return }
            for work in queue.takeAll() { work(target) }
        }))
        AsyncDrain.install(pointer, loop: loop, drain: handle.drain)
    }

    /// Queues `work` to run on the loop thread. Thread: any.
    public func post(_ work: @escaping Work) {
        // Sent under the queue's lock so that `close` cannot free the handle in between.
        queue.append(work, thenWake: { uv_async_send(handle.pointer) })
    }

    /// Closes the wake-up handle; later posts are dropped. Thread: the loop thread, once.
    public func close() {
        queue.close()
        UVHandleMemory.close(handle.pointer)
        handle.drain.release()
    }

    private final class WorkQueue: Sendable {
        private struct State {
            var works: [Work] = []
            var closed = false
        }

        private let state = Mutex(State())

        func append(_ work: @escaping Work, thenWake wake: () -> Void) {
            state.withLock { state in
                guard !state.closed else { return }
                state.works.append(work)
                wake()
            }
        }

        func takeAll() -> [Work] {
            state.withLock { state in
                defer { state.works.removeAll(keepingCapacity: true) }
                return state.works
            }
        }

        func close() { state.withLock { $0.closed = true } }
    }

    // @unchecked: uv_async_send is thread-safe; the drain closure runs only on the loop thread.
    private struct AsyncHandle: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<uv_async_t>
        let drain: Unmanaged<AsyncDrain>
    }
}

/// What a `uv_async_t` runs on the loop thread (non-generic: C callbacks cannot capture generics).
private final class AsyncDrain {
    let run: () -> Void

    init(_ run: @escaping () -> Void) { self.run = run }

    static func install(_ pointer: UnsafeMutablePointer<uv_async_t>, loop: UVLoop, drain: Unmanaged<AsyncDrain>) {
        uv_async_init(loop.raw, pointer) { async in
            guard let data = UVHandleMemory.data(async) else { return }
            Unmanaged<AsyncDrain>.fromOpaque(data).takeUnretainedValue().run()
        }
        UVHandleMemory.setData(pointer, drain.toOpaque())
    }
}
