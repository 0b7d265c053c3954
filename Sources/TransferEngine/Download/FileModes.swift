#if canImport(Glibc)
import Glibc
#endif

/// The modes a download gives what it creates, from the umask of the client that queued it.
public struct FileModes: Equatable, Sendable {
    public static let defaultUmask = 0o022

    public var umask: Int

    public init(umask: Int?) {
        self.umask = (umask ?? Self.defaultUmask) & 0o777
    }

    /// A new destination file (`0666 & ~umask`).
    public var file: mode_t { mode_t(0o666 & ~umask) }
    /// A directory made for it (`0777 & ~umask`).
    public var directory: mode_t { mode_t(0o777 & ~umask) }
}
