import CTransferSupport

/// Owns one libcurl easy handle (one HTTP attempt) and exposes its callbacks as Swift closures.
/// Thread: the loop thread.
public final class CurlEasy {
    /// What the write callback tells libcurl.
    public enum WriteAction {
        /// All bytes were taken.
        case consumed
        /// Keep the bytes and deliver them again after `unpause()`.
        case pause
        /// Stop the transfer (the owner records why).
        case abort
    }

    /// What the read callback tells libcurl.
    public enum ReadAction {
        /// This many bytes were put in the buffer; 0 ends the body.
        case bytes(Int)
        case pause
        /// Stop the transfer (the owner records why).
        case abort
    }

    /// A request body of known length, read through `onRead`.
    public struct Body: Sendable {
        /// `PUT` uses libcurl's upload mode; any other method sends the body like `POST`.
        public var method: String
        public var length: Int64
        public var sendBufferSize = 512 * 1024

        public init(method: String, length: Int64) {
            self.method = method
            self.length = length
        }
    }

    /// The request, in Swift terms.
    public struct Request: Sendable {
        public var url: String
        public var headers: [String] = []
        /// `Range: bytes=N-` when non-zero.
        public var rangeStart: Int64 = 0
        public var receiveBufferSize: Int = 512 * 1024
        public var followRedirects = true
        public var maxRedirects = 10
        /// The URL whose scheme decides where redirects may go, when this request is itself a
        /// step of a redirect (transferd's, `RedirectGuard`): the job's.
        public var redirectOrigin: String?
        public var connectTimeoutSeconds = 30
        /// Abort when fewer than `lowSpeedBytes` per second arrive for `lowSpeedSeconds`.
        public var lowSpeedBytes = 1
        public var lowSpeedSeconds = 60
        public var userAgent = "transferd/\(TransferdVersion.current)"
        /// A body to send, read through `onRead`; nil for a GET.
        public var body: Body?
        /// The method of a request without a body when it is not GET (`MKCOL`).
        public var method: String?
        public var tls = TLSOptions()
        /// The job's proxy, timeouts, credentials, IP version and addresses (`--compressed` is
        /// `acceptEncoding`'s to apply, credentials `sendsCredentials`').
        public var network = NetworkOptions()
        /// Send `network`'s user and password: not to another origin than the job's at a step
        /// of a redirect transferd follows (`RedirectGuard`). A netrc file is read per host.
        public var sendsCredentials = true
        /// Ask for every encoding libcurl can decode (`Accept-Encoding`) and decode the body.
        public var acceptEncoding = false
        /// The whole request may take this long (CURLOPT_TIMEOUT_MS); nil: no limit.
        public var timeoutMilliseconds: Int?
        /// Only connect (and do TLS), then stop: a probe of whether the host answers.
        public var connectOnly = false
        /// Sign with AWS SigV4 (S3): replaces `network`'s user, password and netrc file, and
        /// like them is not applied when `sendsCredentials` is false. The URL must already be
        /// in SigV4's canonical form (`S3Location.objectURL`): libcurl 7.88 signs its path and
        /// query as written. An S3 request should not follow redirects (`followRedirects`):
        /// S3 redirects to another region, which needs another signature.
        public var awsSigning: AWSSigning?

        public init(url: String) { self.url = url }
    }

    let handle: OpaquePointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var resolveList: UnsafeMutablePointer<curl_slist>?
    /// The DNS cache of a request with `--resolve` entries (they would be the whole multi's).
    private var dnsShare: OpaquePointer?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// Where the socket callback leaves the errno of a socket(2) that failed (0: none did).
    private let socketErrno = UnsafeMutablePointer<Int32>.allocate(capacity: 1)

    /// Receives body bytes. Must not be replaced while the handle is in a multi.
    public var onWrite: (UnsafeRawBufferPointer) -> WriteAction = { _ in .consumed }
    /// Receives each header line (status lines included); false aborts the transfer.
    public var onHeader: (UnsafeRawBufferPointer) -> Bool = { _ in true }
    /// Fills the buffer with request body bytes (when the request has a body).
    public var onRead: (UnsafeMutableRawBufferPointer) -> ReadAction = { _ in .bytes(0) }
    /// Rewinds the request body to this offset (libcurl sends it again after an authentication
    /// round trip); false: it cannot.
    public var onSeek: (Int64) -> Bool = { _ in false }

    public init(_ request: Request) throws(CurlCode) {
        guard let handle = tds_curl_easy_init() else { throw CurlCode(CURLE_FAILED_INIT) }
        self.handle = handle
        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(tds_easy_setopt_string(handle, CURLOPT_URL, request.url))
        try check(tds_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        try check(tds_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, request.receiveBufferSize))
        try check(tds_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, request.followRedirects ? 1 : 0))
        try check(tds_easy_setopt_long(handle, CURLOPT_MAXREDIRS, request.maxRedirects))
        try check(tds_easy_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, request.lowSpeedBytes))
        try check(tds_easy_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, request.lowSpeedSeconds))
        try check(tds_easy_setopt_string(handle, CURLOPT_USERAGENT, request.userAgent))
        try check(tds_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, CurlURL.protocols.joined(separator: ",")))
        // An https request may only be redirected to https unless the job allows the downgrade.
        let schemes = request.tls.redirectSchemes(from: request.redirectOrigin ?? request.url)
        try check(tds_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, schemes.joined(separator: ",")))
        try configure(request.tls)
        try configureNetwork(request)
        if request.connectOnly { try check(tds_easy_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1)) }
        if let method = request.method {
            precondition(request.body == nil, "a request with a body takes its method from the body")
            // HEAD's answer announces a body that never comes: libcurl must know not to wait for it.
            if method == "HEAD" {
                try check(tds_easy_setopt_long(handle, CURLOPT_NOBODY, 1))
            } else {
                try check(tds_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method))
            }
        }
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        try check(tds_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        socketErrno.initialize(to: 0)
        try check(tds_easy_record_socket_errors(handle, socketErrno))
        if request.rangeStart > 0 {
            try check(tds_easy_setopt_string(handle, CURLOPT_RANGE, "\(request.rangeStart)-"))
        }
        var headers = request.headers
        let signs = request.awsSigning != nil && request.sendsCredentials
        if let signing = request.awsSigning, signs {
            try configure(signing)
            headers += signing.headers(hasBody: request.body != nil, existing: headers)
        }
        if let body = request.body {
            try configure(body)
            // No `Expect: 100-continue` round trip (libcurl would wait up to a second for it).
            // A signed request cannot say so with an `Expect:` header: libcurl 7.88 signs every
            // header in the list, even one it removes instead of sending, and the server finds
            // `expect` signed but absent. It sends the body without waiting instead.
            if signs {
                try check(tds_easy_setopt_long(handle, CURLOPT_EXPECT_100_TIMEOUT_MS, 0))
            } else {
                headers.append("Expect:")
            }
        }
        for header in headers {
            headerList = tds_curl_slist_append(headerList, header)
        }
        if let headerList { try check(tds_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)) }

        try check(tds_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me))
        try check(tds_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            guard let user else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
            let length = size * count
            switch easy.onWrite(UnsafeRawBufferPointer(start: data, count: length)) {
            case .consumed: return length
            case .pause: return tds_writefunc_pause()
            case .abort: return 0
            }
        })
        try check(tds_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, me))
        try check(tds_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            guard let user else { return 0 }
            let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
            let length = size * count
            return easy.onHeader(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
        })
    }

    deinit {
        tds_curl_easy_cleanup(handle)
        if let dnsShare { tds_curl_share_cleanup(dnsShare) }  // (after the handle that used it)
        tds_curl_slist_free_all(headerList)
        tds_curl_slist_free_all(resolveList)
        errorBuffer.deallocate()
        socketErrno.deallocate()
    }

    /// The URL of the last request (after the redirects libcurl followed).
    public var effectiveURL: String? {
        var url: UnsafePointer<CChar>?
        _ = tds_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &url)
        return url.map { String(cString: $0) }
    }

    /// The status code of the last response (0 before one arrived).
    public var responseCode: Int {
        var code = 0
        _ = tds_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// Whether the request went out whole: its head, and `bodyLength` body bytes, were written
    /// to the connection (so the server may have acted on it, answered or not).
    public func sentWholeRequest(bodyLength: Int64) -> Bool {
        var head = 0
        var body: curl_off_t = 0
        _ = tds_easy_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &head)
        _ = tds_easy_getinfo_off(handle, CURLINFO_SIZE_UPLOAD_T, &body)
        return head > 0 && Int64(body) >= bodyLength
    }

    /// What libcurl measured for this transfer so far.
    public var metrics: AttemptMetrics {
        func milliseconds(_ info: CURLINFO) -> Double {
            var microseconds: curl_off_t = 0
            _ = tds_easy_getinfo_off(handle, info, &microseconds)
            return Double(microseconds) / 1000
        }
        func count(_ info: CURLINFO) -> Int64 {
            var value: curl_off_t = 0
            _ = tds_easy_getinfo_off(handle, info, &value)
            return Int64(value)
        }
        var version = 0
        _ = tds_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        var ip: UnsafePointer<CChar>?
        _ = tds_easy_getinfo_string(handle, CURLINFO_PRIMARY_IP, &ip)
        var port = 0
        _ = tds_easy_getinfo_long(handle, CURLINFO_PRIMARY_PORT, &port)
        let address = ip.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0.contains(":") ? "[\($0)]:\(port)" : "\($0):\(port)" }
        let httpVersion: String? = switch version {
        case CURL_HTTP_VERSION_1_0: "1.0"
        case CURL_HTTP_VERSION_1_1: "1.1"
        case CURL_HTTP_VERSION_2_0: "2"
        case CURL_HTTP_VERSION_3: "3"
        default: nil
        }
        return AttemptMetrics(nameLookupMs: milliseconds(CURLINFO_NAMELOOKUP_TIME_T),
                              connectMs: milliseconds(CURLINFO_CONNECT_TIME_T),
                              tlsMs: milliseconds(CURLINFO_APPCONNECT_TIME_T),
                              firstByteMs: milliseconds(CURLINFO_STARTTRANSFER_TIME_T),
                              totalMs: milliseconds(CURLINFO_TOTAL_TIME_T),
                              httpVersion: httpVersion, remoteAddress: address,
                              bytesPerSecond: max(count(CURLINFO_SPEED_DOWNLOAD_T), count(CURLINFO_SPEED_UPLOAD_T)))
    }

    /// libcurl's detailed message for the last failure, if any.
    public var errorDetail: String? {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? nil : text
    }

    /// The errno of the last socket(2) libcurl asked for and did not get (EMFILE: the process is
    /// out of descriptors), if one failed.
    public var socketError: Int32? {
        socketErrno.pointee == 0 ? nil : socketErrno.pointee
    }

    /// Continues a transfer paused by `WriteAction.pause`. May call the write callback at once.
    public func unpause() {
        _ = tds_curl_easy_pause(handle, tds_pause_cont())
    }

    private func configure(_ tls: TLSOptions) throws(CurlCode) {
        // (The files are RawPaths: libcurl gets their bytes.)
        for (option, path) in [(CURLOPT_CAINFO, tls.cacert), (CURLOPT_SSLCERT, tls.cert), (CURLOPT_SSLKEY, tls.key)] {
            guard let path else { continue }
            try check(RawPath.withCString(path) { tds_easy_setopt_string(handle, option, $0) })
        }
        if let pin = tls.pinnedPublicKey { try check(tds_easy_setopt_string(handle, CURLOPT_PINNEDPUBLICKEY, pin)) }
        // --location-trusted: libcurl keeps `Authorization` and `Cookie` at another host too.
        if tls.locationTrusted { try check(tds_easy_setopt_long(handle, CURLOPT_UNRESTRICTED_AUTH, 1)) }
        if tls.insecure {
            try check(tds_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0))
            try check(tds_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0))
        }
    }

    /// The job's network options, as curl's options of the same names.
    private func configureNetwork(_ request: Request) throws(CurlCode) {
        let network = request.network
        let connectTimeout = network.connectTimeout.map(NetworkOptions.milliseconds) ?? request.connectTimeoutSeconds * 1000
        try check(tds_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout))
        if let timeout = request.timeoutMilliseconds {
            try check(tds_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, timeout)))
        }
        // Set, even to "", the proxy and its exceptions replace the daemon's environment
        // (http_proxy, no_proxy, ...). A job's own proxy is not bypassed by the daemon's
        // no_proxy, which the job's owner may not even know: only by the job's --noproxy.
        if let proxy = network.proxy { try check(tds_easy_setopt_string(handle, CURLOPT_PROXY, proxy)) }
        if let noProxy = network.noProxy ?? network.proxy.map({ _ in "" }) {
            try check(tds_easy_setopt_string(handle, CURLOPT_NOPROXY, noProxy))
        }
        // "": every encoding this libcurl decodes (gzip, deflate, br, zstd as built).
        if request.acceptEncoding { try check(tds_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")) }
        // AWS signing replaces the job's other credentials (CURLAUTH_ANY would undo it).
        let usesCredentials = request.sendsCredentials && request.awsSigning == nil
        if let user = network.user, usesCredentials {
            try check(tds_easy_setopt_string(handle, CURLOPT_USERNAME, user))
            try check(tds_easy_setopt_string(handle, CURLOPT_PASSWORD, network.password ?? ""))
        }
        if let netrcFile = network.netrcFile, request.awsSigning == nil {
            try check(tds_easy_setopt_long(handle, CURLOPT_NETRC, Int(CURL_NETRC_REQUIRED.rawValue)))
            try check(RawPath.withCString(netrcFile) { tds_easy_setopt_string(handle, CURLOPT_NETRC_FILE, $0) })
        }
        // As curl's --anyauth: no credentials until the server asks, then the safest method it
        // offers (Digest before Basic); libcurl sends them to another host only with
        // --location-trusted (CURLOPT_UNRESTRICTED_AUTH).
        if network.hasCredentials, request.awsSigning == nil { try check(tds_easy_set_any_auth(handle)) }
        if let version = network.ipVersion {
            let resolve = version == .v4 ? CURL_IPRESOLVE_V4 : CURL_IPRESOLVE_V6
            try check(tds_easy_setopt_long(handle, CURLOPT_IPRESOLVE, Int(resolve)))
        }
        if !network.resolve.isEmpty {
            // Entries go into the DNS cache the handle uses: a cache of its own, and a connection
            // neither taken from nor left to other jobs (libcurl matches them by host name).
            guard let share = tds_share_dns() else { throw CurlCode(CURLE_OUT_OF_MEMORY) }
            dnsShare = share
            try check(tds_easy_setopt_pointer(handle, CURLOPT_SHARE, UnsafeMutableRawPointer(share)))
            for entry in network.resolve { resolveList = tds_curl_slist_append(resolveList, entry) }
            try check(tds_easy_setopt_slist(handle, CURLOPT_RESOLVE, resolveList))
            try check(tds_easy_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1))
            try check(tds_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, 1))
        }
    }

    /// SigV4 (CURLOPT_AWS_SIGV4 sets CURLAUTH_AWS_SIGV4): libcurl signs the Host header it
    /// sends (the URL's host and port, also through a proxy or `--resolve`), the path and query
    /// as the URL writes them, `content-type` and every `x-amz-*` header, and takes the payload
    /// hash from `x-amz-content-sha256`. The path is sent as it is (CURLOPT_PATH_AS_IS): libcurl
    /// would otherwise drop `.` and `..` segments, which in an S3 key name another object.
    private func configure(_ signing: AWSSigning) throws(CurlCode) {
        try check(tds_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, signing.provider))
        try check(tds_easy_setopt_string(handle, CURLOPT_USERNAME, signing.credentials.accessKeyId))
        try check(tds_easy_setopt_string(handle, CURLOPT_PASSWORD, signing.credentials.secretAccessKey))
        try check(tds_easy_setopt_long(handle, CURLOPT_PATH_AS_IS, 1))
    }

    private func configure(_ body: Body) throws(CurlCode) {
        if body.method == "PUT" {
            try check(tds_easy_setopt_long(handle, CURLOPT_UPLOAD, 1))
            try check(tds_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.length)))
        } else {
            try check(tds_easy_setopt_long(handle, CURLOPT_POST, 1))
            try check(tds_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.length)))
            if body.method != "POST" { try check(tds_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, body.method)) }
        }
        try check(tds_easy_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, body.sendBufferSize))
        try check(tds_easy_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(self).toOpaque()))
        try check(tds_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION) { data, size, count, user in
            guard let user, let data else { return tds_readfunc_abort() }
            let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
            switch easy.onRead(UnsafeMutableRawBufferPointer(start: data, count: size * count)) {
            case .bytes(let count): return count
            case .pause: return tds_readfunc_pause()
            case .abort: return tds_readfunc_abort()
            }
        })
        try check(tds_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, Unmanaged.passUnretained(self).toOpaque()))
        try check(tds_easy_setopt_seek_callback(handle) { user, offset, origin in
            guard let user, origin == SEEK_SET else { return tds_seekfunc_cantseek() }
            let easy = Unmanaged<CurlEasy>.fromOpaque(user).takeUnretainedValue()
            return easy.onSeek(Int64(offset)) ? tds_seekfunc_ok() : tds_seekfunc_cantseek()
        })
    }

    private func check(_ code: CURLcode) throws(CurlCode) {
        if code != CURLE_OK { throw CurlCode(code) }
    }
}
