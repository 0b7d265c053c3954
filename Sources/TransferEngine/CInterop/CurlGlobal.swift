import CTransferSupport

/// libcurl's process-wide setup: once, before any other thread exists.
public enum CurlGlobal {
    public static func initialize() {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }
}
