#if canImport(Glibc)
import Glibc
#endif

/// Who this process is.
public enum ProcessIdentity {
    public static var pid: Int32 { getpid() }
    public static var uid: UInt32 { getuid() }
}
