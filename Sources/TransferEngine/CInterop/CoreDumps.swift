import CTransferSupport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's memory holds secrets (AWS keys, proxy passwords, what header commands print):
/// no core dump of it is ever written, and no process of the same user may trace it.
enum CoreDumps {
    /// The errno when the system refused, else nil.
    static func forbid() -> Int32? {
        tds_forbid_core_dumps() == 0 ? nil : errno
    }
}
