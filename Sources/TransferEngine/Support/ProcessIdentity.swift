#if canImport(Glibc)
import Glibc
#endif

/// Who this process is.
public enum ProcessIdentity {
    public static var pid: Int32 { getpid() }
    public static var uid: UInt32 { getuid() }

    /// This process's file-mode creation mask (read by setting it and putting it back: call it
    /// before any other thread creates files).
    public static var umask: Int {
        let mask = Glibc.umask(0o022)
        Glibc.umask(mask)
        return Int(mask)
    }
}
