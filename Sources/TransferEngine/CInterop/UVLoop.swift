import CTransferSupport
#if canImport(Glibc)
import Glibc
#endif

/// Owns a libuv loop. Thread: the loop thread only (the thread that creates it).
public final class UVLoop {
    let raw: UnsafeMutablePointer<uv_loop_t>
    /// The loop thread, against which debug builds check every entry point that says "Thread:
    /// the loop thread" (`assertOnLoopThread`).
    private let owner = pthread_self()

    public init() throws(UVError) {
        raw = .allocate(capacity: 1)
        let status = uv_loop_init(raw)
        guard status == 0 else {
            raw.deallocate()
            throw UVError(status)
        }
    }

    /// Runs until no active handles remain or `stop()` is called.
    public func run() { uv_run(raw, UV_RUN_DEFAULT) }

    public func stop() { uv_stop(raw) }

    /// Debug builds: stops at once when called from any thread but the loop's (a data race on
    /// the scheduler's state would otherwise go unnoticed until it corrupts it).
    public func assertOnLoopThread(_ file: StaticString = #fileID, _ line: UInt = #line) {
        assert(pthread_equal(owner, pthread_self()) != 0, "not on the loop thread", file: file, line: line)
    }

    /// The loop's clock in milliseconds, as it was when this turn of the loop began: the clock
    /// its timers run on.
    public var now: Int64 { Int64(uv_now(raw)) }

    /// Closes every handle still open, runs their close callbacks, then frees the loop.
    deinit {
        uv_walk(raw, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0 else { return }
            uv_close(handle, nil)
        }, nil)
        uv_run(raw, UV_RUN_DEFAULT)
        uv_loop_close(raw)
        raw.deallocate()
    }
}

/// Allocates a libuv handle whose memory is freed in its close callback, as libuv requires.
enum UVHandleMemory {
    static func allocate<Handle>(_ type: Handle.Type) -> UnsafeMutablePointer<Handle> {
        let pointer = UnsafeMutablePointer<Handle>.allocate(capacity: 1)
        UnsafeMutableRawPointer(pointer).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Handle>.size)
        return pointer
    }

    /// Closes the handle; its memory is released once libuv is done with it.
    static func close<Handle>(_ pointer: UnsafeMutablePointer<Handle>) {
        let handle = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self)
        guard uv_is_closing(handle) == 0 else { return }
        handle.pointee.data = nil
        uv_close(handle) { closed in
            UnsafeMutableRawPointer(closed)?.deallocate()
        }
    }

    static func setData<Handle>(_ pointer: UnsafeMutablePointer<Handle>, _ data: UnsafeMutableRawPointer?) {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self).pointee.data = data
    }

    static func data<Handle>(_ pointer: UnsafeMutablePointer<Handle>?) -> UnsafeMutableRawPointer? {
        guard let pointer else { return nil }
        return UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self).pointee.data
    }
}
