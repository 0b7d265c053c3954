#if canImport(Glibc)
import Glibc
#endif

/// errno values as text, without Foundation.
public enum SystemError {
    public static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }

    /// The calling thread's errno.
    public static var current: Int32 { errno }
}
