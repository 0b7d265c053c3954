import CTransferSupport

/// Owns libcurl's multi handle and drives it from libuv: curl tells us which sockets to watch
/// (socket callback → `UVPoll`) and when to time out (timer callback → `UVTimer`); libuv tells
/// curl when a socket is ready. This is curl's docs/examples/multi-uv.c, in Swift.
/// Thread: the loop thread.
public final class CurlMulti {
    private let handle: OpaquePointer
    private let loop: UVLoop
    private var timer: UVTimer!
    /// Easy handles in the multi, kept alive until removed.
    private var easies: [OpaquePointer: CurlEasy] = [:]
    /// Watches of sockets libcurl stopped watching, kept stopped for the next time it watches
    /// the same descriptor: a kept-alive connection is dropped from the watch at the end of
    /// each transfer and watched again at the start of the next. A new watch costs libuv three
    /// `epoll_ctl` calls more (a check that the descriptor can be polled, and a removal when it
    /// closes), and this a closure and two objects: 6 system calls each time against 3
    /// (docs/design.md). A descriptor number reused by a new socket reuses the watch too: a
    /// stopped watch is only its number.
    private var stoppedWatches: [curl_socket_t: UVPoll] = [:]
    /// Called once per finished transfer, after it has been removed from the multi.
    public var onDone: (CurlEasy, CurlCode) -> Void = { _, _ in }

    /// `idleConnections`: how many connections to keep for reuse once their transfer is done.
    /// libcurl's default follows the number of handles added at the moment, which between
    /// jobs is small: a batch of 2,000 small files to one host opened 316 connections with it,
    /// 16 with a fixed cache (`bench/smallfiles.sh` counts them in nginx's log).
    public init(loop: UVLoop, idleConnections: Int) throws(CurlMultiCode) {
        guard let handle = tds_curl_multi_init() else { throw CurlMultiCode(CURLM_OUT_OF_MEMORY) }
        self.handle = handle
        self.loop = loop
        timer = UVTimer(loop: loop) { [unowned self] in self.socketAction(CURL_SOCKET_TIMEOUT, 0) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        try CurlMultiCode.check(tds_multi_setopt_pointer(handle, CURLMOPT_SOCKETDATA, me))
        try CurlMultiCode.check(tds_multi_setopt_pointer(handle, CURLMOPT_TIMERDATA, me))
        try CurlMultiCode.check(tds_multi_set_maxconnects(handle, idleConnections))
        try CurlMultiCode.check(tds_multi_setopt_socket_callback(handle) { _, socket, what, user, socketData in
            guard let user else { return -1 }
            Unmanaged<CurlMulti>.fromOpaque(user).takeUnretainedValue()
                .watch(socket: socket, what: what, watcher: socketData)
            return 0
        })
        try CurlMultiCode.check(tds_multi_setopt_timer_callback(handle) { _, timeout, user in
            guard let user else { return -1 }
            let multi = Unmanaged<CurlMulti>.fromOpaque(user).takeUnretainedValue()
            // Never drive curl from inside its own callback: a 0 ms timer runs it next turn.
            if timeout < 0 { multi.timer.stop() } else { multi.timer.start(after: UInt64(timeout)) }
            return 0
        })
    }

    deinit {
        for (raw, _) in easies { tds_curl_multi_remove_handle(handle, raw) }
        easies.removeAll()
        tds_curl_multi_cleanup(handle)
    }

    public func add(_ easy: CurlEasy) throws(CurlMultiCode) {
        try CurlMultiCode.check(tds_curl_multi_add_handle(handle, easy.handle))
        easies[easy.handle] = easy
    }

    /// Stops a transfer now; its `onDone` is not called.
    public func remove(_ easy: CurlEasy) {
        guard easies.removeValue(forKey: easy.handle) != nil else { return }
        tds_curl_multi_remove_handle(handle, easy.handle)
    }

    private func watch(socket: curl_socket_t, what: Int32, watcher: UnsafeMutableRawPointer?) {
        if what == CURL_POLL_REMOVE {
            if let watcher {
                let poll = Unmanaged<UVPoll>.fromOpaque(watcher).takeRetainedValue()
                poll.stop()
                stoppedWatches[socket] = poll
                tds_curl_multi_assign(handle, socket, nil)
            }
            return
        }
        let poll: UVPoll
        if let watcher {
            poll = Unmanaged<UVPoll>.fromOpaque(watcher).takeUnretainedValue()
        } else {
            guard let watch = stoppedWatches.removeValue(forKey: socket) ?? newWatch(socket) else { return }
            poll = watch
            tds_curl_multi_assign(handle, socket, Unmanaged.passRetained(watch).toOpaque())
        }
        var events: UVPoll.Events = []
        if what == CURL_POLL_IN || what == CURL_POLL_INOUT { events.insert(.readable) }
        if what == CURL_POLL_OUT || what == CURL_POLL_INOUT { events.insert(.writable) }
        poll.start(events)
    }

    private func newWatch(_ socket: curl_socket_t) -> UVPoll? {
        try? UVPoll(loop: loop, socket: socket) { [unowned self] status, events in
            var flags: Int32 = 0
            if status < 0 { flags = CURL_CSELECT_ERR }
            if events.contains(.readable) { flags |= CURL_CSELECT_IN }
            if events.contains(.writable) { flags |= CURL_CSELECT_OUT }
            self.socketAction(socket, flags)
        }
    }

    private func socketAction(_ socket: curl_socket_t, _ flags: Int32) {
        var running: Int32 = 0
        tds_curl_multi_socket_action(handle, socket, flags, &running)
        readFinished()
    }

    private func readFinished() {
        var remaining: Int32 = 0
        while let message = tds_curl_multi_info_read(handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let raw = message.pointee.easy_handle else { continue }
            let code = CurlCode(message.pointee.data.result)
            tds_curl_multi_remove_handle(handle, raw)
            guard let easy = easies.removeValue(forKey: raw) else { continue }
            onDone(easy, code)
        }
    }
}
