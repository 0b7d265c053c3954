import TransferEngine

/// `transferctl show ID`: one job in full, with its attempts.
struct ShowCommand: Subcommand {
    static let help = """
        usage: transferctl show ID [--curl]

        Shows one job in full: state and why, progress, errors, every attempt with its timings,
        and an upload's response. --curl prints an equivalent curl command for the job's next
        attempt instead, secrets redacted.

        examples:
          transferctl show 3 --json
          transferctl show 3 --curl
        """

    var id: JobID
    var curl: Bool

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> ShowCommand {
        let curl = arguments.flag("--curl")
        let ids = try arguments.jobIDs()
        guard ids.count == 1 else { throw UsageError("show takes one job id") }
        return ShowCommand(id: ids[0], curl: curl)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response = try context.send(ControlRequest(.show, ids: [id]))
        guard let job = response.job else { throw CommandFailure(message: "no job \(id)", status: .failure) }
        if curl {
            // The range of the next attempt comes from the job's resume data, when it has some.
            let resume = job.kind == .download && !job.state.hasEnded
                ? try? context.send(ControlRequest(.resumeData, ids: [id])).resumeData : nil
            context.print(CurlCommand.line(for: job, resume: resume))
            return .success
        }
        let attempts = response.attempts ?? []
        if context.json {
            context.printJSON(JobDetail(job: job, attempts: attempts, response: response.response,
                                        hookRuns: response.hookRuns ?? [], uploadSession: response.uploadSession))
        } else {
            context.print(lines: JobFormatter.detail(job, attempts: attempts, response: response.response,
                                                     session: response.uploadSession))
            for run in response.hookRuns ?? [] {
                context.print("  hook on-\(run.event) at \(run.startedAt.iso8601): \(run.result.summary)")
            }
        }
        return .success
    }
}

/// `show --json`: the job object plus `attemptLog` and, for uploads, the server's `response`.
struct JobDetail: Encodable {
    var job: Job
    var attempts: [AttemptRecord]
    var response: UploadResponse?
    var hookRuns: [HookRun]
    var uploadSession: UploadSession?

    func encode(to encoder: Encoder) throws {
        try job.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(attempts, forKey: .attemptLog)
        try container.encode(hookRuns, forKey: .hookRuns)
        if job.kind == .upload { try container.encode(response, forKey: .response) }
        if job.remote != nil { try container.encode(uploadSession, forKey: .uploadSession) }
    }

    private enum Key: String, CodingKey { case attemptLog, response, hookRuns, uploadSession }
}
