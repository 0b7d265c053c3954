import CTransferSupport

/// The C heap. Thread: any.
enum Memory {
    /// Gives the heap's free pages back to the system: glibc keeps freed memory for later
    /// allocations, so dropping a large, abandoned request would not lower the daemon's RSS.
    static func returnFreed() {
        _ = malloc_trim(0)
    }
}
