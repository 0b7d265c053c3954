import CTransferSupport

/// A libcurl easy result code as a typed value, with the category the engine decides on.
public struct CurlCode: Error, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    init(_ code: CURLcode) { rawValue = code.rawValue }

    public static let ok = CurlCode(CURLE_OK)

    /// The (redirected) URL's protocol is not allowed for this transfer.
    public var isUnsupportedProtocol: Bool { rawValue == CURLE_UNSUPPORTED_PROTOCOL.rawValue }

    /// A timeout: on connect, or too few bytes for too long once the transfer runs.
    public var isTimeout: Bool { rawValue == CURLE_OPERATION_TIMEDOUT.rawValue }

    public var description: String { String(cString: curl_easy_strerror(CURLcode(rawValue: rawValue))) }

    /// What kind of failure this is, for retry decisions and `error.code`.
    public enum Category: Sendable {
        case ok
        /// The host could not be resolved or connected to: wait until it answers again.
        case unreachable
        /// The connection broke or timed out: worth another attempt.
        case network
        /// Certificate, host name or pinned-key verification failed: never retried.
        case tls
        /// One of our callbacks stopped the transfer (the engine knows why).
        case aborted
        /// The request itself is wrong (bad URL, unsupported protocol): never retried.
        case request
    }

    public var category: Category {
        switch CURLcode(rawValue: rawValue) {
        case CURLE_OK:
            return .ok
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT:
            return .unreachable
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_PARTIAL_FILE, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR, CURLE_RECV_ERROR,
             CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_WEIRD_SERVER_REPLY,
             CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR, CURLE_AGAIN:
            return .network
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_CONNECT_ERROR:
            return .tls
        case CURLE_WRITE_ERROR, CURLE_READ_ERROR, CURLE_ABORTED_BY_CALLBACK:
            return .aborted
        default:
            return .request
        }
    }
}

/// A libcurl multi result code.
public struct CurlMultiCode: Error, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    init(_ code: CURLMcode) { rawValue = code.rawValue }

    public var description: String { String(cString: curl_multi_strerror(CURLMcode(rawValue: rawValue))) }

    static func check(_ code: CURLMcode) throws(CurlMultiCode) {
        if code != CURLM_OK { throw CurlMultiCode(code) }
    }
}
