#if canImport(Glibc)
import Glibc
#endif

/// Seconds on a monotonic clock.
public enum Monotonic {
    public static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
