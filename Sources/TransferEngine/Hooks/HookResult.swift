/// How one hook run ended, as the daemon logs and stores it.
public struct HookResult: Codable, Sendable, Equatable {
    /// The shell's exit status; nil if it was killed by a signal or never started.
    public var exitStatus: Int?
    /// The signal that killed the shell (9 after a timeout).
    public var signal: Int?
    /// The time limit ran out and the hook's process group was killed.
    public var timedOut: Bool
    /// The first `HookRunner.outputLimit` bytes of stdout and stderr together, as UTF-8 with
    /// invalid sequences replaced.
    public var output: String
    /// More output came than `output` keeps.
    public var truncated: Bool
    public var durationMilliseconds: Int64
    /// Why the hook did not run, e.g. "cannot run /bin/sh: No such file or directory".
    public var startError: String?

    public init(exitStatus: Int? = nil, signal: Int? = nil, timedOut: Bool = false, output: String = "",
                truncated: Bool = false, durationMilliseconds: Int64 = 0, startError: String? = nil) {
        self.exitStatus = exitStatus
        self.signal = signal
        self.timedOut = timedOut
        self.output = output
        self.truncated = truncated
        self.durationMilliseconds = durationMilliseconds
        self.startError = startError
    }

    private enum CodingKeys: String, CodingKey {
        case exitStatus, signal, timedOut, output, truncated, durationMilliseconds, startError
    }

    /// Every key present, null when it does not apply.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(exitStatus, forKey: .exitStatus)
        try container.encode(signal, forKey: .signal)
        try container.encode(timedOut, forKey: .timedOut)
        try container.encode(output, forKey: .output)
        try container.encode(truncated, forKey: .truncated)
        try container.encode(durationMilliseconds, forKey: .durationMilliseconds)
        try container.encode(startError, forKey: .startError)
    }

    /// The hook ran and exited with status 0.
    public var succeeded: Bool { exitStatus == 0 && !timedOut && startError == nil }

    /// One line: "exit 0", "exit 3", "killed by signal 9", "timed out after 2 s", "could not start: …".
    public var summary: String {
        if let startError { return "could not start: \(startError)" }
        if timedOut { return "timed out after \(Self.seconds(durationMilliseconds)) s" }
        if let exitStatus { return "exit \(exitStatus)" }
        if let signal { return "killed by signal \(signal)" }
        return "ended without a status"
    }

    /// 2000 → "2", 300 → "0.3", 2550 → "2.6" (tenths, half up).
    private static func seconds(_ milliseconds: Int64) -> String {
        let tenths = max(0, milliseconds).saturatingAdd(50) / 100
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}
