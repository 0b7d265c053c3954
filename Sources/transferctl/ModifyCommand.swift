import TransferEngine

/// `transferctl modify ID [options]`: change a job that is not transferring.
struct ModifyCommand: Subcommand {
    static let help = """
        usage: transferctl modify ID [--url URL] [-H 'Name: value']... [--remove-header NAME]...
                                     [--limit-rate RATE] [--priority P] [--retry N]

        Changes a job that is queued, paused, waiting or failed (pause a running one first):
        a presigned URL that expired, a header, its limit, priority or retries. Each value is
        checked as for a new job, and the change is recorded before the command returns. A
        download keeps its bytes: its next attempt asks the new URL for the rest with the
        entity's validators (If-Range), and starts over only if the server's entity differs.

        options:
          --url URL               the new URL
          -H, --header 'N: v'     set a header (replacing the job's headers of that name; repeatable)
          --remove-header NAME    remove the job's headers of that name (repeatable)
          --limit-rate RATE       the job's bandwidth, e.g. 512K, 4M; 0 or off: unlimited
          --priority P            high, normal or low
          --retry N               retries after a failed attempt, counted from now

        examples:
          transferctl modify 7 --url 'https://bucket.example.com/big.iso?X-Amz-Signature=...'
          transferctl modify 7 -H 'Authorization: Bearer NEW' --priority high
        """

    var request: ControlRequest

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> ModifyCommand {
        var changes = JobChanges()
        changes.url = try arguments.option("--url")
        let headers = try arguments.options("-H", "--header")
        changes.headers = headers.isEmpty ? nil : headers
        let removed = try arguments.options("--remove-header")
        changes.removeHeaders = removed.isEmpty ? nil : removed
        if let text = try arguments.option("--limit-rate") {
            do { changes.limit = try Rate.parse(text) ?? 0 } catch { throw UsageError(error.message) }
        }
        if let text = try arguments.option("--priority") {
            guard let priority = Priority(rawValue: text) else {
                throw UsageError("--priority must be high, normal or low, got '\(text)'")
            }
            changes.priority = priority
        }
        changes.retries = try arguments.number("--retry", NumericLimits.retries)
        let ids = try arguments.jobIDs()
        guard ids.count == 1 else { throw UsageError("modify takes one job id") }
        guard !changes.isEmpty else { throw UsageError("modify needs something to change (see transferctl modify --help)") }
        var request = ControlRequest(.modify, ids: ids)
        request.changes = changes
        return ModifyCommand(request: request)
    }

    func run(_ context: Context) throws -> ExitStatus {
        guard let job = try context.send(request).job else {
            throw CommandFailure(message: "the daemon did not return the job", status: .failure)
        }
        if context.json { context.printJSON(job) } else { context.print("job \(job.id) modified") }
        return .success
    }
}
