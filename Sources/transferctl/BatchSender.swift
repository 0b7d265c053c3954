import FoundationEssentials
import TransferEngine

/// Sends a manifest to the daemon in chunks that fit the control protocol's line limit, all on
/// one connection under one token; the daemon queues it at the last chunk, all or nothing.
/// `plan` sends a backup's entries the same way to `backup-plan`, which answers each chunk.
enum BatchSender {
    static func send(_ entries: [ManifestEntry], as template: BatchSubmission, context: Context) throws -> SubmissionResult {
        var result: SubmissionResult?
        try inChunks(entries, as: template, command: .submit, context: context) { submission, response in
            guard submission.final else { return }
            guard let submitted = response.submitted else {
                throw CommandFailure(message: "the daemon did not say what it queued", status: .failure)
            }
            result = submitted
        }
        guard let result else { throw CommandFailure(message: "the daemon did not say what it queued", status: .failure) }
        return result
    }

    /// What queueing a backup's entries would do with each file, in their order; nothing is
    /// queued or created (`backup --dry-run`).
    static func plan(_ entries: [ManifestEntry], as template: BatchSubmission, context: Context) throws -> [BackupDecision] {
        var decisions: [BackupDecision] = []
        decisions.reserveCapacity(entries.count)
        try inChunks(entries, as: template, command: .backupPlan, context: context) { submission, response in
            let plan = response.plan ?? []
            guard plan.count == submission.entries.count else {
                throw CommandFailure(message: "the daemon did not answer for every file (is it older than this transferctl?)",
                                     status: .failure)
            }
            decisions += plan
        }
        return decisions
    }

    /// Sends `entries` as `command` requests of at most a line each, on one connection under one
    /// token, the last one `final`, and hands each answer with its chunk to `answered`.
    private static func inChunks(_ entries: [ManifestEntry], as template: BatchSubmission, command: ControlCommand,
                                 context: Context,
                                 answered: (BatchSubmission, ControlResponse) throws -> Void) throws {
        let client = try ControlClient(socketPath: context.global.paths.socket)
        var submission = template
        submission.umask = ProcessIdentity.umask
        submission.token = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        var start = 0
        var chunk = 1000
        let encoder = JSONStreamEncoder()
        repeat {
            let end = min(entries.count, start + chunk)
            submission.entries = Array(entries[start..<end])
            submission.final = end == entries.count
            let request = try encoder.encode(ControlRequest(command, submission: submission))
            // Halve a chunk that would not fit in one request line.
            if chunk > 1, request.count > ControlRequest.maxLineBytes - 4096 {
                chunk /= 2
                continue
            }
            let response = try client.send(encoded: request)
            if let error = response.error, !response.ok {
                throw CommandFailure(message: error.message, status: Context.status(for: error.code))
            }
            try answered(submission, response)
            start = end
        } while !submission.final
    }

    /// Prints the batch id (`--json`: the whole result), and what happened on stderr.
    static func report(_ result: SubmissionResult, context: Context) {
        if context.json {
            context.printJSON(result)
        } else {
            context.print(String(result.batch))
            let skipped = result.skipped > 0 ? ", \(result.skipped) skipped (already there or unchanged)" : ""
            Context.note("batch \(result.batch) (\(result.name)): \(result.jobs) jobs queued\(skipped)")
        }
    }
}
