import CTransferSupport

/// libcurl's URL parser (the CURLU API), which is what libcurl resolves a redirect's `Location`
/// with: a redirect transferd follows itself goes exactly where libcurl would have gone.
/// Each call owns its handle from `curl_url()` to `curl_url_cleanup`. Thread: any.
enum CurlURL {
    /// `reference` (absolute, or relative as a `Location` may be) resolved against `base`;
    /// nil when either does not parse.
    static func resolve(_ reference: String, against base: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        let flags = UInt32(CURLU_URLENCODE) | UInt32(CURLU_ALLOW_SPACE)
        guard curl_url_set(handle, CURLUPART_URL, base, 0) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_URL, reference, flags) == CURLUE_OK else { return nil }
        var resolved: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_URL, &resolved, 0) == CURLUE_OK, let resolved else { return nil }
        defer { curl_free(resolved) }
        return String(cString: resolved)
    }
}
