/// `--header-command CMD`: credentials that outlive a long queue (the seeds' RequestAdapter /
/// AuthenticationInterceptor). Before each attempt the command runs through the hook runner
/// (`/bin/sh -c`, its own process group, a time limit; stderr discarded) with the job's id,
/// attempt and URL in its environment; each line it prints is a `Name: value` header added to
/// that attempt's request. Its output is a secret: never logged, stored or shown — not even in
/// an error, which says only what went wrong. Thread: `run` blocks (a hook thread).
enum HeaderCommand {
    static let timeoutMilliseconds = 30_000

    static func run(_ command: String, job: Job, attempt: Int) -> Result<[String], TransferError> {
        let hook = HookCommand(command: "exec 2>/dev/null\n" + command,
                               environment: ["TRANSFERD_JOB_ID": job.id.description, "TRANSFERD_ATTEMPT": String(attempt),
                                             "TRANSFERD_URL": job.url, "TRANSFERD_KIND": job.kind.rawValue],
                               timeoutMilliseconds: timeoutMilliseconds)
        let result = HookRunner.run(hook)
        if let problem = result.startError { return .failure(.auth("could not run: \(problem)")) }
        if result.timedOut { return .failure(.auth("timed out after \(timeoutMilliseconds / 1000) s")) }
        if let signal = result.signal { return .failure(.auth("was killed by signal \(signal)")) }
        if let status = result.exitStatus, status != 0 { return .failure(.auth("exited with status \(status)")) }
        if result.truncated { return .failure(.auth("printed more than \(HookRunner.outputLimit) bytes")) }
        return headers(fromOutput: result.output)
    }

    /// The header lines of the command's output (blank lines skipped, a CR before LF dropped);
    /// a line that is not `Name: value` fails the whole, by its number only.
    static func headers(fromOutput output: String) -> Result<[String], TransferError> {
        var headers: [String] = []
        // ("\r\n" is one Character: a separator of its own.)
        let lines = output.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (number, line) in lines.enumerated() {
            guard !line.allSatisfy({ $0 == " " || $0 == "\t" }) else { continue }
            guard let colon = line.firstIndex(of: ":"), isToken(line[..<colon]),
                  line.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) else {
                return .failure(.auth("printed line \(number + 1), which is not a 'Name: value' header"))
            }
            headers.append(String(line))
        }
        return .success(headers)
    }

    /// An HTTP field name (RFC 9110 token).
    private static func isToken(_ name: Substring) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }
}
