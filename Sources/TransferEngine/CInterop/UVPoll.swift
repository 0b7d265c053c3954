import CTransferSupport

/// Watches one socket for readability/writability. Thread: the loop thread.
final class UVPoll {
    struct Events: OptionSet {
        var rawValue: Int32
        static let readable = Events(rawValue: Int32(UV_READABLE.rawValue))
        static let writable = Events(rawValue: Int32(UV_WRITABLE.rawValue))
    }

    private let handle: UnsafeMutablePointer<uv_poll_t>
    private let callback: (_ status: Int32, _ events: Events) -> Void
    let socket: Int32

    init(loop: UVLoop, socket: Int32, _ callback: @escaping (Int32, Events) -> Void) throws(UVError) {
        handle = UVHandleMemory.allocate(uv_poll_t.self)
        self.callback = callback
        self.socket = socket
        let status = uv_poll_init_socket(loop.raw, handle, socket)
        guard status == 0 else {
            handle.deallocate()
            throw UVError(status)
        }
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { UVHandleMemory.close(handle) }

    func start(_ events: Events) {
        uv_poll_start(handle, events.rawValue) { handle, status, events in
            guard let data = UVHandleMemory.data(handle) else { return }
            Unmanaged<UVPoll>.fromOpaque(data).takeUnretainedValue().callback(status, Events(rawValue: events))
        }
    }

    func stop() { uv_poll_stop(handle) }
}
