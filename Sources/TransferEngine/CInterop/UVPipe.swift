#if canImport(Glibc)
import Glibc
#endif
import CTransferSupport

/// A listening Unix-domain socket (0600) on the loop. Thread: the loop thread.
final class UVPipeListener {
    private let handle: UnsafeMutablePointer<uv_pipe_t>
    private let loop: UVLoop
    private let onConnection: (UVPipeConnection) -> Void

    init(loop: UVLoop, path: String, onConnection: @escaping (UVPipeConnection) -> Void) throws(UVError) {
        self.loop = loop
        self.onConnection = onConnection
        handle = UVHandleMemory.allocate(uv_pipe_t.self)
        uv_pipe_init(loop.raw, handle, 0)
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
        // uv_pipe_chmod cannot express 0600: bind under a umask that leaves only the owner, then chmod.
        let previous = umask(0o177)
        let bound = uv_pipe_bind(handle, path)
        umask(previous)
        guard bound == 0 else {
            UVHandleMemory.close(handle)
            throw UVError(bound)
        }
        chmod(path, 0o600)
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
        let connection = UVPipeConnection(loop: loop)
        let server = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self)
        guard uv_accept(server, connection.stream) == 0 else { return connection.close() }
        onConnection(connection)
    }
}

/// One accepted connection: reads chunks, writes buffers, closes once. Thread: the loop thread.
final class UVPipeConnection {
    private static let readBufferSize = 64 * 1024

    private let handle: UnsafeMutablePointer<uv_pipe_t>
    private let readBuffer = UnsafeMutableRawPointer.allocate(byteCount: UVPipeConnection.readBufferSize, alignment: 16)
    private(set) var isClosed = false
    /// Bytes as they arrive.
    var onRead: (UnsafeRawBufferPointer) -> Void = { _ in }
    /// The peer closed, or reading failed; called once, before `close()` returns control.
    var onEnd: () -> Void = {}

    fileprivate init(loop: UVLoop) {
        handle = UVHandleMemory.allocate(uv_pipe_t.self)
        uv_pipe_init(loop.raw, handle, 0)
        UVHandleMemory.setData(handle, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if !isClosed { UVHandleMemory.close(handle) }
        readBuffer.deallocate()
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

    func startReading() {
        uv_read_start(stream, { handle, _, buffer in
            guard let data = UVHandleMemory.data(handle), let buffer else { return }
            let connection = Unmanaged<UVPipeConnection>.fromOpaque(data).takeUnretainedValue()
            buffer.pointee = uv_buf_init(connection.readBuffer.assumingMemoryBound(to: CChar.self),
                                         UInt32(UVPipeConnection.readBufferSize))
        }, { stream, count, _ in
            guard let data = UVHandleMemory.data(stream) else { return }
            let connection = Unmanaged<UVPipeConnection>.fromOpaque(data).takeUnretainedValue()
            if count > 0 {
                connection.onRead(UnsafeRawBufferPointer(start: connection.readBuffer, count: count))
            } else if count < 0 {
                connection.onEnd()
            }
        })
    }

    /// Bytes queued for writing that the peer has not taken yet.
    var queuedBytes: Int { uv_stream_get_write_queue_size(stream) }

    /// Queues `bytes` for writing; they are copied and freed once written.
    func write(_ bytes: [UInt8]) {
        guard !isClosed, !bytes.isEmpty else { return }
        let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        request.pointee.data = copy
        var buffer = uv_buf_init(copy.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
        let status = uv_write(request, stream, &buffer, 1) { request, _ in
            request?.pointee.data.deallocate()
            request?.deallocate()
        }
        if status != 0 {
            copy.deallocate()
            request.deallocate()
        }
    }

    /// Closes after pending writes are flushed (libuv closes streams in order).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        uv_read_stop(stream)
        UVHandleMemory.setData(handle, nil)
        let shutdown = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        let handle = handle
        if uv_shutdown(shutdown, stream, { request, _ in
            if let request, let stream = request.pointee.handle {
                UVHandleMemory.close(stream)
            }
            request?.deallocate()
        }) != 0 {
            shutdown.deallocate()
            UVHandleMemory.close(handle)
        }
    }
}
