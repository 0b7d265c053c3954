import CTransferSupport

/// The C heap. Thread: any.
enum Memory {
    /// Keeps the memory of short-lived large buffers for the next ones. Each transfer's easy
    /// handle has a 512 KiB receive buffer (`CurlEasy.Request.receiveBufferSize`): glibc mapped
    /// each afresh (above its 128 KiB threshold) or trimmed the heap under it, and every page
    /// the next transfer received into was a page fault — 5,000 to 9,000 per batch of 2,000
    /// small downloads, about 4,000 after (`/proc/PID/stat` minflt). Below 1 MiB from the heap,
    /// and up to 8 MiB free at its top kept; `returnFreed` still gives everything back.
    static func keepBuffers() {
        _ = mallopt(M_MMAP_THRESHOLD, 1 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 8 << 20)
    }

    /// Gives the heap's free pages back to the system: glibc keeps freed memory for later
    /// allocations, so dropping a large, abandoned request would not lower the daemon's RSS.
    static func returnFreed() {
        _ = malloc_trim(0)
    }
}
