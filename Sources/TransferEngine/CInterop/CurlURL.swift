import CTransferSupport

/// libcurl's own URL parser (the CURLU API), so that a URL is refused when it is queued exactly
/// when a transfer would refuse it, with libcurl's reason. Thread: any (each call owns its handle).
public enum CurlURL {
    /// The protocols a transfer may use (CURLOPT_PROTOCOLS_STR), in order.
    public static let protocols = ["http", "https"]

    /// The flags libcurl itself parses CURLOPT_URL with (lib/url.c: CURLU_NON_SUPPORT_SCHEME, and
    /// CURLU_GUESS_SCHEME, left out here: a job's URL must name its scheme).
    static let flags = UInt32(CURLU_NON_SUPPORT_SCHEME)

    /// What a transfer needs to know of a URL libcurl accepts.
    public struct Parts: Equatable, Sendable {
        /// Lowercase, as libcurl normalises it.
        public var scheme: String
        public var host: String
    }

    /// The URL's scheme and host, or libcurl's reason for refusing it.
    public static func parse(_ text: String) throws(CurlURLCode) -> Parts {
        guard let handle = tds_curl_url() else { throw CurlURLCode(CURLUE_OUT_OF_MEMORY) }
        defer { tds_curl_url_cleanup(handle) }
        try CurlURLCode.check(tds_curl_url_set(handle, CURLUPART_URL, text, flags))
        func part(_ which: CURLUPart) throws(CurlURLCode) -> String {
            var value: UnsafeMutablePointer<CChar>?
            try CurlURLCode.check(tds_curl_url_get(handle, which, &value, 0))
            defer { tds_curl_free(value) }
            return value.map { String(cString: $0) } ?? ""
        }
        return Parts(scheme: try part(CURLUPART_SCHEME), host: try part(CURLUPART_HOST))
    }

    /// `reference` (absolute, or relative as a `Location` may be) resolved against `base`, as
    /// libcurl resolves a redirect's `Location`: a redirect transferd follows itself goes exactly
    /// where libcurl would have gone. Nil when either does not parse.
    static func resolve(_ reference: String, against base: String) -> String? {
        guard let handle = tds_curl_url() else { return nil }
        defer { tds_curl_url_cleanup(handle) }
        let flags = UInt32(CURLU_URLENCODE) | UInt32(CURLU_ALLOW_SPACE)
        guard tds_curl_url_set(handle, CURLUPART_URL, base, 0) == CURLUE_OK,
              tds_curl_url_set(handle, CURLUPART_URL, reference, flags) == CURLUE_OK else { return nil }
        var resolved: UnsafeMutablePointer<CChar>?
        guard tds_curl_url_get(handle, CURLUPART_URL, &resolved, 0) == CURLUE_OK, let resolved else { return nil }
        defer { tds_curl_free(resolved) }
        return String(cString: resolved)
    }
}

/// A libcurl URL API result code (CURLUcode) as a typed value.
public struct CurlURLCode: Error, Equatable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    init(_ code: CURLUcode) { rawValue = code.rawValue }

    /// Characters that must be percent-encoded (a space, a control character) stand in the path,
    /// query or fragment, or the URL is not one at all.
    public var isBadCharacters: Bool {
        [CURLUE_BAD_PATH, CURLUE_BAD_QUERY, CURLUE_BAD_FRAGMENT, CURLUE_MALFORMED_INPUT].map(\.rawValue).contains(rawValue)
    }

    /// The URL does not start with a scheme libcurl can read (`http://`).
    public var lacksScheme: Bool { [CURLUE_BAD_SCHEME, CURLUE_NO_SCHEME].map(\.rawValue).contains(rawValue) }

    public var description: String { String(cString: tds_curl_url_strerror(CURLUcode(rawValue: rawValue))) }

    static func check(_ code: CURLUcode) throws(CurlURLCode) {
        if code != CURLUE_OK { throw CurlURLCode(code) }
    }
}
