import CTransferSupport

/// A libcurl easy result code as a typed value, with the category the engine decides on.
public struct CurlCode: Error, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    init(_ code: CURLcode) { rawValue = code.rawValue }

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let ok = CurlCode(CURLE_OK)

    /// The (redirected) URL's protocol is not allowed for this transfer.
    public var isUnsupportedProtocol: Bool { rawValue == CURLE_UNSUPPORTED_PROTOCOL.rawValue }

    /// A timeout: on connect, or too few bytes for too long once the transfer runs.
    public var isTimeout: Bool { rawValue == CURLE_OPERATION_TIMEDOUT.rawValue }

    public var description: String { String(cString: tds_curl_easy_strerror(CURLcode(rawValue: rawValue))) }

    /// What kind of failure this is, for retry decisions and `error.code`.
    public enum Category: Sendable, CaseIterable {
        case ok
        /// The host could not be resolved or connected to: wait until it answers again.
        case unreachable
        /// The connection broke or timed out: worth another attempt.
        case network
        /// Certificate, host name or pinned-key verification failed: never retried.
        case tls
        /// One of our callbacks stopped the transfer: the engine's verdict says why; without
        /// one, never retried.
        case aborted
        /// libcurl refuses the request as it is set up (bad URL, unsupported protocol, bad
        /// argument or option, too many redirects, a body it cannot send again): never retried.
        case request
        /// A local failure (out of memory, a failed poll, initialisation): never retried.
        case local
        /// Only FTP, TFTP, LDAP, SSH, RTSP or telnet transfers end so; transferd speaks HTTP
        /// only. Never retried.
        case otherProtocol
        /// Numbers libcurl no longer returns. Never retried.
        case unused

        /// Whether a failure of this kind is worth another attempt.
        public var isRetried: Bool {
            switch self {
            case .unreachable, .network: true
            case .ok, .tls, .aborted, .request, .local, .otherProtocol, .unused: false
            }
        }
    }

    /// Every CURLcode of libcurl 7.88 (0 ..< CURL_LAST), each in exactly one category.
    static let table: [(Category, [CURLcode])] = [
        (.ok, [CURLE_OK]),
        (.unreachable, [CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT]),
        (.network, [CURLE_COULDNT_RESOLVE_PROXY, CURLE_PARTIAL_FILE, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR,
                    CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_WEIRD_SERVER_REPLY,
                    CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR, CURLE_AGAIN, CURLE_PROXY, CURLE_SSL_SHUTDOWN_FAILED,
                    CURLE_NO_CONNECTION_AVAILABLE]),
        (.tls, [CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
                CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
                CURLE_SSL_INVALIDCERTSTATUS, CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
                CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CONNECT_ERROR,
                CURLE_SSL_CLIENTCERT]),
        (.aborted, [CURLE_WRITE_ERROR, CURLE_READ_ERROR, CURLE_ABORTED_BY_CALLBACK]),
        (.request, [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_BAD_FUNCTION_ARGUMENT,
                    CURLE_UNKNOWN_OPTION, CURLE_SETOPT_OPTION_SYNTAX, CURLE_INTERFACE_FAILED,
                    CURLE_TOO_MANY_REDIRECTS, CURLE_HTTP_RETURNED_ERROR, CURLE_RANGE_ERROR, CURLE_HTTP_POST_ERROR,
                    CURLE_BAD_DOWNLOAD_RESUME, CURLE_BAD_CONTENT_ENCODING, CURLE_FILESIZE_EXCEEDED,
                    CURLE_SEND_FAIL_REWIND, CURLE_LOGIN_DENIED, CURLE_AUTH_ERROR, CURLE_CHUNK_FAILED,
                    CURLE_RECURSIVE_API_CALL]),
        (.local, [CURLE_FAILED_INIT, CURLE_OUT_OF_MEMORY, CURLE_UNRECOVERABLE_POLL]),
        (.otherProtocol, [CURLE_REMOTE_ACCESS_DENIED, CURLE_FTP_ACCEPT_FAILED, CURLE_FTP_WEIRD_PASS_REPLY,
                          CURLE_FTP_ACCEPT_TIMEOUT, CURLE_FTP_WEIRD_PASV_REPLY, CURLE_FTP_WEIRD_227_FORMAT,
                          CURLE_FTP_CANT_GET_HOST, CURLE_FTP_COULDNT_SET_TYPE, CURLE_FTP_COULDNT_RETR_FILE,
                          CURLE_QUOTE_ERROR, CURLE_UPLOAD_FAILED, CURLE_FTP_PORT_FAILED, CURLE_FTP_COULDNT_USE_REST,
                          CURLE_FILE_COULDNT_READ_FILE, CURLE_LDAP_CANNOT_BIND, CURLE_LDAP_SEARCH_FAILED,
                          CURLE_TFTP_NOTFOUND, CURLE_TFTP_PERM, CURLE_REMOTE_DISK_FULL, CURLE_TFTP_ILLEGAL,
                          CURLE_TFTP_UNKNOWNID, CURLE_REMOTE_FILE_EXISTS, CURLE_TFTP_NOSUCHUSER,
                          CURLE_REMOTE_FILE_NOT_FOUND, CURLE_SSH, CURLE_FTP_PRET_FAILED, CURLE_RTSP_CSEQ_ERROR,
                          CURLE_RTSP_SESSION_ERROR, CURLE_FTP_BAD_FILE_LIST]),
        (.unused, [CURLE_OBSOLETE20, CURLE_OBSOLETE24, CURLE_OBSOLETE29, CURLE_OBSOLETE32, CURLE_OBSOLETE40,
                   CURLE_FUNCTION_NOT_FOUND, CURLE_OBSOLETE44, CURLE_OBSOLETE46, CURLE_OBSOLETE50,
                   CURLE_OBSOLETE51, CURLE_OBSOLETE57, CURLE_OBSOLETE62, CURLE_OBSOLETE75, CURLE_OBSOLETE76]),
    ]

    /// One past the highest code this libcurl's header knows.
    static let last = CURL_LAST.rawValue

    private static let categories: [UInt32: Category] = {
        var categories: [UInt32: Category] = [:]
        for (category, codes) in table {
            for code in codes { categories[code.rawValue] = category }
        }
        return categories
    }()

    /// A code newer than the table (a later libcurl) is treated as a request error: never retried.
    public var category: Category { Self.categories[rawValue] ?? .request }
}

/// A libcurl multi result code.
public struct CurlMultiCode: Error, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    init(_ code: CURLMcode) { rawValue = code.rawValue }

    public var description: String { String(cString: tds_curl_multi_strerror(CURLMcode(rawValue: rawValue))) }

    static func check(_ code: CURLMcode) throws(CurlMultiCode) {
        if code != CURLM_OK { throw CurlMultiCode(code) }
    }
}
