/// Tells servers to discard the unfinished uploads of cancelled jobs (tus termination: DELETE;
/// S3: AbortMultipartUpload), on the loop's curl multi like every transfer. The session stays
/// recorded until the server has answered that it is gone (a 2xx, 404 or 410) or that it never
/// will discard it (`refusesForGood`: said once in the log); a server that cannot be reached,
/// or fails, is asked again when the daemon next starts. Thread: the loop thread.
final class SessionDiscarder {
    private let multi: CurlMulti
    private let logger: Logger
    /// Called once the server no longer holds the job's upload.
    private let forget: (JobID) -> Void
    private var jobsByEasy: [ObjectIdentifier: (id: JobID, easy: CurlEasy, url: String)] = [:]

    init(multi: CurlMulti, logger: Logger, forget: @escaping (JobID) -> Void) {
        self.multi = multi
        self.logger = logger
        self.forget = forget
    }

    /// Sends `request` (the job's headers, TLS and network options with it).
    func discard(_ id: JobID, _ request: SessionRequest, headers: [String], tls: TLSOptions, network: NetworkOptions,
                 signing: AWSSigning?) {
        var curl = CurlEasy.Request(url: request.url)
        curl.method = request.method
        curl.headers = request.headers + headers
        curl.tls = tls
        curl.network = network
        curl.followRedirects = false
        curl.timeoutMilliseconds = 60_000
        curl.awsSigning = request.signed ? signing : nil
        do {
            let easy = try CurlEasy(curl)
            try multi.add(easy)
            jobsByEasy[ObjectIdentifier(easy)] = (id, easy, request.url)
        } catch {
            logger.warn("job \(id): cannot ask the server to discard the upload: \(error)")
        }
    }

    /// A refusal another try will not change: a 4xx other than 408 and 429, or 501. Not 401
    /// or 403: refused credentials may be mended (a rotated S3 key), and an S3 upload left
    /// behind keeps costing storage.
    static func refusesForGood(_ status: Int) -> Bool {
        ((400..<500).contains(status) && ![401, 403, 408, 429].contains(status)) || status == 501
    }

    /// A request of the multi ended; returns false when it was not one of ours.
    func ended(_ easy: CurlEasy, _ code: CurlCode) -> Bool {
        guard let pending = jobsByEasy.removeValue(forKey: ObjectIdentifier(easy)) else { return false }
        let shown = Redaction.url(pending.url)
        guard code.category == .ok else {
            logger.info("job \(pending.id): discarding the upload at \(shown) failed (\(code)); asked again at the next start")
            return true
        }
        let status = easy.responseCode
        if (200..<300).contains(status) || status == 404 || status == 410 {
            logger.info("job \(pending.id): the server discarded the upload (HTTP \(status))")
            forget(pending.id)
        } else if Self.refusesForGood(status) {
            // A server without termination (405, 501) or that forbids it answers the same at every start.
            logger.warn("job \(pending.id): the server refused to discard the upload at \(shown) (HTTP \(status)); "
                + "it stays there until the server expires it, and is not asked again")
            forget(pending.id)
        } else {
            logger.info("job \(pending.id): discarding the upload at \(shown) was answered HTTP \(status); asked again at the next start")
        }
        return true
    }
}
