/// Creates the WebDAV collections that the PUTs of a directory backup need (see
/// `WebDAVLayout`), with MKCOL requests on the loop's curl multi like every transfer. Per batch
/// it remembers which collections are there, so each is asked for once per backup; jobs that
/// need a collection whose MKCOL is on its way wait for that one instead of sending another.
/// A failed MKCOL is not remembered: the jobs waiting for it fail with its status, and a
/// later attempt asks again. Thread: the loop thread.
final class CollectionMaker {
    typealias Done = (Result<Void, TransferError>) -> Void

    /// What every MKCOL of a job carries: the job's own headers (credentials), TLS and network options.
    struct Access {
        var headers: [String]
        var tls: TLSOptions
        /// The job's proxy, timeouts, credentials and addresses (each MKCOL may take its `--max-time`).
        var network: NetworkOptions
        var stallSeconds: Int
    }

    private struct Key: Hashable {
        var batch: Int64
        var url: String
    }

    /// A MKCOL on its way (its easy handle is the multi's until it ends), and what to do when
    /// it is answered.
    private struct Pending {
        var stallSeconds: Int
        var waiters: [Done]
    }

    private let multi: CurlMulti
    private let logger: Logger
    /// Per batch with unfinished jobs, the collections known to be there.
    private var existing: [Int64: Set<String>] = [:]
    private var pending: [Key: Pending] = [:]
    private var keysByEasy: [ObjectIdentifier: Key] = [:]

    init(multi: CurlMulti, logger: Logger) {
        self.multi = multi
        self.logger = logger
    }

    /// Makes sure `collections` (parents first) exist, then calls `done`: at once when they are
    /// known to, otherwise once the MKCOLs they need are answered. `wanted` is asked before each
    /// further step; a job that no longer wants them (paused, cancelled) is dropped quietly.
    func ensure(_ collections: ArraySlice<String>, batch: Int64, access: Access, wanted: @escaping () -> Bool,
                then done: @escaping Done) {
        let known = existing[batch, default: []]
        existing[batch] = known
        guard let index = collections.firstIndex(where: { !known.contains($0) }) else { return done(.success(())) }
        let key = Key(batch: batch, url: collections[index])
        let rest = collections[(index + 1)...]
        let waiter: Done = { [unowned self] result in
            guard wanted() else { return }
            switch result {
            case .success: ensure(rest, batch: batch, access: access, wanted: wanted, then: done)
            case .failure: done(result)
            }
        }
        if pending[key] != nil {
            pending[key]?.waiters.append(waiter)
            return
        }
        var request = CurlEasy.Request(url: key.url)
        request.method = "MKCOL"
        request.headers = access.headers
        request.tls = access.tls
        request.network = access.network
        request.timeoutMilliseconds = access.network.maxTime.map(NetworkOptions.milliseconds)
        request.followRedirects = false
        request.lowSpeedSeconds = access.stallSeconds
        let easy: CurlEasy
        do {
            easy = try CurlEasy(request)
            try multi.add(easy)
        } catch {
            return done(.failure(.network("cannot send MKCOL \(Redaction.url(key.url)): \(error)")))
        }
        pending[key] = Pending(stallSeconds: access.stallSeconds, waiters: [waiter])
        keysByEasy[ObjectIdentifier(easy)] = key
    }

    /// A request of the multi ended; returns false when it was not a MKCOL of ours.
    func ended(_ easy: CurlEasy, _ code: CurlCode) -> Bool {
        guard let key = keysByEasy.removeValue(forKey: ObjectIdentifier(easy)),
              let request = pending.removeValue(forKey: key) else { return false }
        let result: Result<Void, TransferError>
        let shown = Redaction.url(key.url)
        if code.category == .ok {
            let status = easy.responseCode
            switch MkcolAnswer(status: status) {
            case .created, .exists:
                logger.debug("MKCOL \(shown): HTTP \(status)")
                // A batch forgotten meanwhile (every job ended) keeps nothing.
                existing[key.batch]?.insert(key.url)
                result = .success(())
            case .failed:
                logger.info("MKCOL \(shown): HTTP \(status); \(request.waiters.count) waiting uploads fail")
                result = .failure(.collection(url: key.url, status: status))
            }
        } else {
            let error = TransferError(code, detail: easy.errorDetail, socketError: easy.socketError, moving: false,
                                      stallSeconds: request.stallSeconds)
            logger.info("MKCOL \(shown) failed: \(error.message)")
            result = .failure(error)
        }
        for waiter in request.waiters { waiter(result) }
        return true
    }

    /// The batch has no unfinished job left: forget its collections (a `retry` asks again).
    func forget(batch: Int64) {
        existing[batch] = nil
    }
}
