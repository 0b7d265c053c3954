import CTransferSupport

/// The C heap. Thread: any.
enum Memory {
    /// Gives the heap's free pages back to the system: glibc keeps freed memory for later
    /// allocations, so dropping a large, abandoned request would not lower the daemon's RSS.
    static func returnFreed() {
        _ = malloc_trim(0)
    }

    /// Keeps up to 64 MiB freed at the top of the heap for the next allocations instead of
    /// handing it back at once, and serves blocks up to 1 MiB (libcurl's receive buffer of each
    /// transfer: 512 KiB) from the heap. A batch of small files allocates and frees a buffer or
    /// two per file: glibc's defaults gave the top of the heap back and took it again some 265
    /// times per 2,000 files, each page zero-filled again on its next touch. Setting either
    /// turns glibc's own adjustment of both off, so both are set. Larger blocks (a big request)
    /// are still mapped and unmapped, and `returnFreed` still gives the heap back.
    static func keepFreedForReuse() {
        _ = mallopt(M_MMAP_THRESHOLD, 1 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 64 << 20)
    }
}
