import FoundationEssentials
import TransferEngine

/// Sends a manifest to the daemon in chunks that fit the control protocol's line limit, all on
/// one connection under one token; the daemon queues it at the last chunk, all or nothing.
enum BatchSender {
    static func send(_ entries: [ManifestEntry], as template: BatchSubmission, context: Context) throws -> SubmissionResult {
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
            let request = try encoder.encode(ControlRequest(.submit, submission: submission))
            // Halve a chunk that would not fit in one request line.
            if chunk > 1, request.count > ControlRequest.maxLineBytes - 4096 {
                chunk /= 2
                continue
            }
            let response = try client.send(encoded: request)
            if let error = response.error, !response.ok {
                throw CommandFailure(message: error.message, status: Context.status(for: error.code))
            }
            if submission.final {
                guard let result = response.submitted else {
                    throw CommandFailure(message: "the daemon did not say what it queued", status: .failure)
                }
                return result
            }
            start = end
        } while true
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
