import CTransferSupport

/// Delivers a Unix signal on the loop thread. Thread: the loop thread.
public final class UVSignal {
    private let handle: UnsafeMutablePointer<uv_signal_t>
    private let callback: (Int32) -> Void

    public init(loop: UVLoop, signal: Int32, _ callback: @escaping (Int32) -> Void) {
        handle = UVHandleMemory.allocate(uv_signal_t.self)
        self.callback = callback
        uv_signal_init(loop.raw, handle)
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
        uv_signal_start(handle, { handle, signal in
            guard let data = UVHandleMemory.data(handle) else { return }
            Unmanaged<UVSignal>.fromOpaque(data).takeUnretainedValue().callback(signal)
        }, signal)
    }

    deinit { UVHandleMemory.close(handle) }
}
