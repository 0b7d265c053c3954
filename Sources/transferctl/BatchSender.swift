import FoundationEssentials
import TransferEngine

/// Sends a manifest to the daemon in chunks that fit the control protocol's line limit, all on
/// one connection under one token; the daemon queues it at the last chunk, all or nothing.
/// `plan` sends a backup's entries the same way to `backup-plan`, which answers each chunk.
enum BatchSender {
    static func send(_ entries: EntrySource, as template: BatchSubmission, context: Context) throws -> SubmissionResult {
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
        try inChunks(EntrySource(entries), as: template, command: .backupPlan, context: context) { submission, response in
            let plan = response.plan ?? []
            guard plan.count == submission.entries.count else {
                throw CommandFailure(message: "the daemon did not answer for every file (is it older than this transferctl?)",
                                     status: .failure)
            }
            decisions += plan
        }
        return decisions
    }

    /// Entries a request carries at most: the daemon reads one chunk while the next is read from
    /// the manifest and encoded, so only the last one's decoding waits (`BENCHMARKS.md`).
    private static let chunkSize = 250

    /// Sends the entries of `source` as `command` requests of at most a line each, on one
    /// connection under one token, the last one `final`, and hands each answer with its chunk
    /// to `answered`. Each chunk is sent before the next is read and encoded, and its answer
    /// read before the next is sent: a refused chunk ends the submission. The first chunk is
    /// read before connecting (a bad first line needs no daemon); a manifest's bad line throws
    /// `Manifest.LineError`, and the daemon drops what the connection staged.
    private static func inChunks(_ source: EntrySource, as template: BatchSubmission, command: ControlCommand,
                                 context: Context,
                                 answered: (BatchSubmission, ControlResponse) throws -> Void) throws {
        var source = source
        var submission = template
        submission.umask = ProcessIdentity.umask
        submission.token = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        var chunk = chunkSize
        let encoder = JSONStreamEncoder()
        /// The next chunk as a request, halved until it fits in a line.
        func nextRequest() throws -> (BatchSubmission, [UInt8]) {
            var entries = try source.next(chunk)
            while true {
                submission.entries = entries
                submission.final = source.isAtEnd
                let request = try encoder.encode(ControlRequest(command, submission: submission))
                guard entries.count > 1, request.count > ControlRequest.maxLineBytes - 4096 else { return (submission, request) }
                chunk = entries.count / 2
                source.giveBack(entries[chunk...])
                entries.removeSubrange(chunk...)
            }
        }
        var (sent, request) = try nextRequest()
        let client = try ControlClient(socketPath: context.global.paths.socket)
        while true {
            do {
                try client.post(encoded: request)
            } catch .connectionClosed {
                // Closed before it read the request: its answer says why.
            }
            let next = sent.final ? nil : try nextRequest()
            let response = try client.receive()
            if let error = response.error, !response.ok {
                throw CommandFailure(message: error.message, status: Context.status(for: error.code))
            }
            try answered(sent, response)
            guard let next else { return }
            (sent, request) = next
        }
    }

    /// Prints the batch id (`--json`: the whole result), and what happened on stderr.
    static func report(_ result: SubmissionResult, context: Context) {
        if context.json {
            context.printJSON(result)
        } else {
            context.print(String(result.batch))
            let skipped = result.skipped > 0 ? ", \(result.skipped) skipped (already there or unchanged)" : ""
            Context.note("batch \(result.batch) (\(result.name)): \(result.jobs) job\(result.jobs == 1 ? "" : "s") queued\(skipped)")
        }
    }
}
