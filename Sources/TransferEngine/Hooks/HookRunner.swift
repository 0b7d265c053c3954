#if canImport(Glibc)
import Glibc
#endif
import CTransferSupport

/// Runs one completion hook (`tds_run_hook`): `/bin/sh -c command` in a process group of its
/// own, stdin from /dev/null, stdout and stderr captured together, killed with its whole group
/// when the time limit runs out. A background process the hook leaves behind does not hold
/// up the result.
///
/// Thread: any thread that may block — never the loop thread. `run` waits for the hook
/// (up to its `timeoutMilliseconds`), so the daemon calls it on a queue of its own and posts
/// the `HookResult` back to the loop.
public enum HookRunner {
    /// How many bytes of combined output a `HookResult` keeps.
    public static let outputLimit = 64 * 1024

    /// Runs `hook` and waits for it. The hook's environment is the daemon's (`environ`, read
    /// now) with `hook.environment` added over it.
    public static func run(_ hook: HookCommand) -> HookResult {
        let started = ContinuousClock.now
        func elapsed() -> Int64 {
            let duration = started.duration(to: .now).components
            return duration.seconds * 1000 + duration.attoseconds / 1_000_000_000_000_000
        }
        if let problem = invalidInput(hook) {
            return HookResult(durationMilliseconds: elapsed(), startError: problem)
        }

        let variables: [UnsafeMutablePointer<CChar>?] = environment(overriddenBy: hook.environment).map { RawPath.withCString($0) { strdup($0) } } + [nil]
        defer { for variable in variables { free(variable) } }
        var output = [CChar](repeating: 0, count: outputLimit)
        var length = 0
        var truncated: Int32 = 0
        var status: Int32 = 0
        var timedOut: Int32 = 0
        let timeout = Int32(clamping: max(0, hook.timeoutMilliseconds))
        let code = output.withUnsafeMutableBufferPointer { buffer in
            variables.withUnsafeBufferPointer { environment in
                tds_run_hook(hook.command, environment.baseAddress, timeout, buffer.baseAddress, buffer.count,
                             &length, &truncated, &status, &timedOut)
            }
        }
        let duration = elapsed()
        guard code == 0 else {
            return HookResult(durationMilliseconds: duration, startError: "cannot run /bin/sh: \(SystemError.describe(code))")
        }

        let text = output[..<length].withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        // The raw wait status, decoded as WIFEXITED / WEXITSTATUS / WTERMSIG do (the macros do not import).
        let terminatingSignal = Int(status & 0x7f)
        let exited = terminatingSignal == 0
        let signaled = terminatingSignal != 0 && terminatingSignal != 0x7f
        return HookResult(
            exitStatus: exited && timedOut == 0 ? Int((status >> 8) & 0xff) : nil,
            signal: signaled ? terminatingSignal : nil,
            timedOut: timedOut != 0,
            output: text,
            truncated: truncated != 0,
            durationMilliseconds: duration,
            startError: nil
        )
    }

    /// Text C strings cannot carry: a NUL in the command or a variable, or a name with `=`.
    private static func invalidInput(_ hook: HookCommand) -> String? {
        if hook.command.utf8.contains(0) { return "the command contains a NUL byte" }
        for (name, value) in hook.environment.sorted(by: { $0.key < $1.key }) {
            if name.isEmpty || name.utf8.contains(UInt8(ascii: "=")) || name.utf8.contains(0) {
                return "invalid environment variable name '\(name)'"
            }
            if value.utf8.contains(0) { return "environment variable \(name) contains a NUL byte" }
        }
        return nil
    }

    /// The daemon's own credentials, which it signs S3 requests with: never a hook's (a hook
    /// that prints its environment would put them into `hook_runs`, which `show` prints).
    static let daemonCredentials: Set<String> = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                                 "AWS_SECURITY_TOKEN"]

    /// `NAME=value` lines (`RawPath`s, so a path that is not UTF-8 reaches the hook as its
    /// bytes): the daemon's variables in their order but its credentials, overridden ones
    /// replaced in place, new ones appended sorted by name.
    static func environment(overriddenBy overrides: [String: String]) -> [String] {
        var result: [String] = []
        var replaced: Set<String> = []
        var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        while let pointer = entry?.pointee {
            let line = RawPath.string(cString: pointer)
            if let equals = line.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(line[..<equals])
                if Self.daemonCredentials.contains(name) {
                    // (left out)
                } else if let value = overrides[name] {
                    if replaced.insert(name).inserted { result.append(name + "=" + value) }
                } else {
                    result.append(line)
                }
            }
            entry = entry?.advanced(by: 1)
        }
        for (name, value) in overrides.sorted(by: { $0.key < $1.key }) where !replaced.contains(name) {
            result.append(name + "=" + value)
        }
        return result
    }
}
