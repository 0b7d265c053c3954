import CTransferSupport

/// A negative libuv status code as a typed value.
public struct UVError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    public var description: String { "\(String(cString: uv_err_name(code))): \(String(cString: uv_strerror(code)))" }

    /// Throws when a libuv call returned a negative status.
    static func check(_ status: Int32) throws(UVError) {
        if status < 0 { throw UVError(status) }
    }
}
