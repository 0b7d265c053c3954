/// A user command to run when a job or batch finishes (like aria2's `--on-download-complete`):
/// a `/bin/sh -c` command line, the variables that describe the job, and a time limit.
public struct HookCommand: Sendable, Equatable {
    /// Run as `/bin/sh -c command`.
    public var command: String
    /// Added to the daemon's own environment, replacing variables of the same name.
    public var environment: [String: String]
    /// After this long the hook's whole process group is killed; 0 or less: no limit.
    public var timeoutMilliseconds: Int

    public init(command: String, environment: [String: String] = [:], timeoutMilliseconds: Int) {
        self.command = command
        self.environment = environment
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}
