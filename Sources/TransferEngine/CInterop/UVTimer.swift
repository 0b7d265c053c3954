import CTransferSupport

/// A libuv timer with a Swift callback. Thread: the loop thread.
public final class UVTimer {
    private let handle: UnsafeMutablePointer<uv_timer_t>
    private let callback: () -> Void

    public init(loop: UVLoop, _ callback: @escaping () -> Void) {
        handle = UVHandleMemory.allocate(uv_timer_t.self)
        self.callback = callback
        uv_timer_init(loop.raw, handle)
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { UVHandleMemory.close(handle) }

    /// Fires once after `milliseconds`, or every `repeat` milliseconds after that when non-zero.
    public func start(after milliseconds: UInt64, repeat interval: UInt64 = 0) {
        uv_timer_start(handle, { handle in
            guard let data = UVHandleMemory.data(handle) else { return }
            Unmanaged<UVTimer>.fromOpaque(data).takeUnretainedValue().callback()
        }, milliseconds, interval)
    }

    public func stop() { uv_timer_stop(handle) }
}
