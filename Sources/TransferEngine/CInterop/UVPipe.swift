#if canImport(Glibc)
import Glibc
#endif
import CTransferSupport

/// A listening Unix-domain socket on the loop: one it binds (0600), or one it is handed
/// (socket activation). Its handle owns the socket's descriptor and closes it. Thread: the
/// loop thread.
final class UVPipeListener {
    private let handle: UnsafeMutablePointer<uv_pipe_t>
    private let loop: UVLoop
    private let readBuffer = UVReadBuffer()
    private let onConnection: (UVPipeConnection) -> Void

    /// Binds a new socket at `path`, owner-only.
    convenience init(loop: UVLoop, path: String, onConnection: @escaping (UVPipeConnection) -> Void) throws(UVError) {
        try self.init(loop: loop, onConnection: onConnection) { handle throws(UVError) in
            // uv_pipe_chmod cannot express 0600: bind under a umask that leaves only the owner, then chmod.
            let previous = umask(0o177)
            let bound = uv_pipe_bind(handle, path)
            umask(previous)
            guard bound == 0 else { throw UVError(bound) }
            chmod(path, 0o600)
        }
    }

    /// Serves a socket that is already bound and listening (`SocketActivation`). The
    /// descriptor belongs to the listener from this call on: it is closed with it, or at once
    /// when this throws.
    convenience init(loop: UVLoop, descriptor: Int32, onConnection: @escaping (UVPipeConnection) -> Void) throws(UVError) {
        var adopted = false
        defer { if !adopted { close(descriptor) } }
        try self.init(loop: loop, onConnection: onConnection) { handle throws(UVError) in
            let opened = uv_pipe_open(handle, descriptor)
            guard opened == 0 else { throw UVError(opened) }
            adopted = true
        }
    }

    /// `attach` gives the new handle its socket (bind or open); then it listens.
    private init(loop: UVLoop, onConnection: @escaping (UVPipeConnection) -> Void,
                 attach: (UnsafeMutablePointer<uv_pipe_t>) throws(UVError) -> Void) throws(UVError) {
        self.loop = loop
        self.onConnection = onConnection
        handle = UVHandleMemory.allocate(uv_pipe_t.self)
        uv_pipe_init(loop.raw, handle, 0)
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
        do {
            try attach(handle)
        } catch {
            UVHandleMemory.close(handle)
            throw error
        }
        let stream = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self)
        let listening = uv_listen(stream, 128) { server, status in
            guard status == 0, let data = UVHandleMemory.data(server) else { return }
            Unmanaged<UVPipeListener>.fromOpaque(data).takeUnretainedValue().accept()
        }
        guard listening == 0 else {
            UVHandleMemory.close(handle)
            throw UVError(listening)
        }
    }

    deinit { UVHandleMemory.close(handle) }

    private func accept() {
        let connection = UVPipeConnection(loop: loop, readBuffer: readBuffer)
        let server = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self)
        guard uv_accept(server, connection.stream) == 0 else { return connection.close() }
        onConnection(connection)
    }
}

/// The buffer every connection of a listener reads into: libuv asks for it right before a read
/// and the read callback consumes it at once, so one buffer serves them all (a connection held
/// open costs no 64 KiB of its own). Thread: the loop thread.
final class UVReadBuffer {
    static let size = 64 * 1024
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: UVReadBuffer.size, alignment: 16)

    deinit { bytes.deallocate() }
}

/// One accepted connection: reads chunks (until told to stop), writes buffers, closes once.
/// Thread: the loop thread.
final class UVPipeConnection {
    private let handle: UnsafeMutablePointer<uv_pipe_t>
    private let readBuffer: UVReadBuffer
    private(set) var isClosed = false
    private(set) var isReading = false
    /// Bytes as they arrive.
    var onRead: (UnsafeRawBufferPointer) -> Void = { _ in }
    /// The peer closed, or reading failed; called once, before `close()` returns control.
    var onEnd: () -> Void = {}
    /// A write finished: `queuedBytes` went down.
    var onWritten: () -> Void = {}

    fileprivate init(loop: UVLoop, readBuffer: UVReadBuffer) {
        self.readBuffer = readBuffer
        handle = UVHandleMemory.allocate(uv_pipe_t.self)
        uv_pipe_init(loop.raw, handle, 0)
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if !isClosed { UVHandleMemory.close(handle) }
    }

    fileprivate var stream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self)
    }

    /// The uid of the connected process (SO_PEERCRED).
    var peerUID: UInt32? {
        var fd: uv_os_fd_t = -1
        let handle = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)
        guard uv_fileno(handle, &fd) == 0 else { return nil }
        return FileSystem.peerUID(fd)
    }

    /// Reads until `stopReading()`; does nothing while already reading.
    func startReading() {
        guard !isClosed, !isReading else { return }
        isReading = true
        uv_read_start(stream, { handle, _, buffer in
            guard let data = UVHandleMemory.data(handle), let buffer else { return }
            let connection = Unmanaged<UVPipeConnection>.fromOpaque(data).takeUnretainedValue()
            buffer.pointee = uv_buf_init(connection.readBuffer.bytes.assumingMemoryBound(to: CChar.self),
                                         UInt32(UVReadBuffer.size))
        }, { stream, count, _ in
            guard let data = UVHandleMemory.data(stream) else { return }
            let connection = Unmanaged<UVPipeConnection>.fromOpaque(data).takeUnretainedValue()
            if count > 0 {
                connection.onRead(UnsafeRawBufferPointer(start: connection.readBuffer.bytes, count: count))
            } else if count < 0 {
                connection.onEnd()
            }
        })
    }

    /// Leaves further bytes in the socket (the peer's writes block once its buffer is full).
    func stopReading() {
        guard !isClosed, isReading else { return }
        isReading = false
        uv_read_stop(stream)
    }

    /// Bytes queued for writing that the peer has not taken yet.
    var queuedBytes: Int { isClosed ? 0 : uv_stream_get_write_queue_size(stream) }

    /// Queues `bytes` for writing; they are copied and freed once written (or the connection closed).
    func write(_ bytes: [UInt8]) {
        guard !isClosed, !bytes.isEmpty else { return }
        let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        request.pointee.data = copy
        var buffer = uv_buf_init(copy.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
        let status = uv_write(request, stream, &buffer, 1) { request, _ in
            guard let request else { return }
            let stream = request.pointee.handle
            request.pointee.data.deallocate()
            request.deallocate()
            guard let data = UVHandleMemory.data(stream) else { return }  // closed meanwhile
            Unmanaged<UVPipeConnection>.fromOpaque(data).takeUnretainedValue().onWritten()
        }
        if status != 0 {
            copy.deallocate()
            request.deallocate()
        }
    }

    /// Closes now. Bytes already written reach the peer; bytes still queued (a peer that does
    /// not read) are dropped with their buffers, so a connection never outlives its close.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        isReading = false
        UVHandleMemory.close(handle)
    }
}
