import Foundation

/// One upload a tus server holds, finished or not, whichever server it is.
struct TusStoredUpload: Sendable {
    /// The last path segment of its Location.
    let id: String
    /// What HEAD would answer as `Upload-Offset`.
    let offset: Int64
    /// `Upload-Length`; nil while deferred.
    let size: Int64?
    /// The stored bytes (tussi preallocates this file to `size`: its length is not the offset).
    let dataURL: URL
}

/// What a tus test needs of a server, whichever implementation it is (TusImplementation):
/// tuspyserver (`TusServer`) or tussi (`TussiServer`), each under uvicorn on 127.0.0.1 in its own
/// directory, counting what it receives (tus_counting.py).
protocol TusServing: AnyObject {
    /// The creation URL: `http://127.0.0.1:PORT/files/`.
    var endpoint: String { get }
    /// Starts on a free port, or on the previous one with `samePort`; waits until it answers.
    func start(samePort: Bool) throws
    func stop()
    /// Requests per method, PATCH body bytes as the app received them, answers by status.
    func stats() throws -> TusStats
    func resetStats() throws
    /// Every upload the server holds, in progress or finished.
    func storedUploads() throws -> [TusStoredUpload]
    /// SHA-256 of the first `offset` bytes stored for the upload.
    func sha256(of upload: TusStoredUpload) throws -> String
    func log() -> String
}
