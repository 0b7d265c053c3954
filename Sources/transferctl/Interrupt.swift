#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C during a display drawn in place: the terminal is left on a fresh line.
enum Interrupt {
    /// `watch`: end the board's line on stdout and exit 0.
    static func exitCleanly() {
        signal(SIGINT) { _ in
            _ = write(1, "\n", 1)
            _exit(0)
        }
    }

    /// `wait --progress`: end the progress line on stderr and exit 130, as an interrupted
    /// program does (the jobs go on).
    static func endProgressLine() {
        signal(SIGINT) { _ in
            _ = write(2, "\n", 1)
            _exit(130)
        }
    }
}
