import CTransferSupport

/// libcurl's process-wide setup: the library opened (it is loaded at run time, not linked:
/// `curl_library.c`) and initialised, once, before any other thread exists.
public enum CurlGlobal {
    /// Why libcurl could not be opened: dlopen(3)'s reason, or the function it lacks.
    public struct LoadFailure: Error, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { "cannot load libcurl: \(reason) (install libcurl4)" }
    }

    public static func initialize() throws(LoadFailure) {
        var error = [CChar](repeating: 0, count: 512)
        guard tds_curl_load(&error, error.count) == 0 else {
            throw LoadFailure(reason: String(decoding: error.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self))
        }
        tds_curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }
}
