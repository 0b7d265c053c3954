import FoundationEssentials
import TransferEngine

/// `transferctl batch submit|create|list|show`: groups of jobs.
struct BatchCommand: Subcommand {
    static let help = """
        usage: transferctl batch submit FILE|- [--name NAME [--reuse] | --batch B] [--wait] [hooks]
               transferctl batch create NAME [hooks]
               transferctl batch list
               transferctl batch show B

        A batch is a named group of jobs; its state comes from its jobs' states. pause,
        resume, cancel, wait, list and watch take --batch B to act on all of its jobs.

        submit reads a manifest (JSON Lines, one job a line; '-' reads stdin) and queues
        all of it as one batch, or nothing when a line is wrong (its number is reported).
        It prints the batch id. A line is {"key": K, "download": {...}} or
        {"key": K, "upload": {...}} with the fields of docs/batches.md; a key already in
        the batch is not queued again, so a submit that was interrupted can be re-run.
        create makes an empty batch for download/upload --batch B.

        options:
          --name NAME             the batch's name (default: the manifest's file name)
          --reuse                 add to the newest batch called NAME, if there is one
          --batch B               add to the existing batch B
          --wait                  then wait for the batch as `wait --batch B` does (its exit
                                  status: 1 when a job failed or was cancelled)
          --on-complete CMD       run CMD (with /bin/sh) when every job of the batch has ended
                                  and none failed; TRANSFERD_BATCH_ID, TRANSFERD_STATE,
                                  TRANSFERD_JOBS_COMPLETED, ... are set
          --on-fail CMD           run CMD when the batch ends with failed jobs

        examples:
          transferctl batch submit nightly.jsonl
          transferctl batch submit --wait mirror.jsonl && echo all done
          transferctl batch submit --name nightly --reuse nightly.jsonl
          transferctl batch show 3
        """

    enum Action {
        /// `wait`: then wait for the batch's jobs to end.
        case submit(path: String, template: BatchSubmission, wait: Bool)
        case create(BatchSubmission)
        case list
        case show(Int64)
    }

    var action: Action

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> BatchCommand {
        guard let verb = arguments.takeSubcommand() else {
            throw UsageError("batch needs submit, create, list or show (see transferctl batch --help)")
        }
        var template = BatchSubmission(token: "", final: true, entries: [])
        template.onComplete = try arguments.option("--on-complete")
        template.onFail = try arguments.option("--on-fail")
        template.name = try arguments.option("--name")
        template.reuse = arguments.flag("--reuse")
        template.batch = try arguments.batch()
        let wait = arguments.flag("--wait")
        let positionals = try arguments.positionals()
        if wait, verb != "submit" { throw UsageError("--wait goes with batch submit") }
        switch verb {
        case "submit":
            guard positionals.count == 1, let path = positionals.first else {
                throw UsageError("batch submit takes one manifest file, or - for stdin")
            }
            if template.batch != nil, template.name != nil { throw UsageError("give --batch or --name, not both") }
            if template.reuse, template.name == nil { throw UsageError("--reuse goes with --name") }
            if template.name == nil, template.batch == nil {
                template.name = path == "-" ? "stdin" : String(path.split(separator: "/").last ?? "manifest")
            }
            return BatchCommand(action: .submit(path: path, template: template, wait: wait))
        case "create":
            guard positionals.count == 1, let name = positionals.first else { throw UsageError("batch create takes a NAME") }
            template.name = name
            return BatchCommand(action: .create(template))
        case "list":
            guard positionals.isEmpty else { throw UsageError("batch list takes no argument") }
            return BatchCommand(action: .list)
        case "show":
            guard positionals.count == 1, let text = positionals.first else { throw UsageError("batch show takes a batch id") }
            return BatchCommand(action: .show(try ArgumentList.number(text, NumericLimits.id, "batch id")))
        default:
            throw UsageError("unknown batch command '\(verb)': use submit, create, list or show")
        }
    }

    func run(_ context: Context) throws -> ExitStatus {
        switch action {
        case .submit(let path, let template, let wait):
            let bytes = path == "-" ? FileReader.standardInput(limit: 1 << 30) : FileReader.contents(of: path, limit: 1 << 30)
            guard let bytes else { throw UsageError("cannot read the manifest \(path)") }
            let name = path == "-" ? "stdin" : path
            let result: SubmissionResult
            do {
                result = try BatchSender.send(EntrySource(manifest: ManifestReader(bytes)), as: template, context: context)
            } catch let error as Manifest.LineError {
                throw UsageError("\(name):\(error.line): \(error.message); nothing was queued")
            } catch let failure as CommandFailure {
                // The daemon checks what only it can (files, existing destinations) and names the line.
                throw CommandFailure(message: "\(name): \(failure.message); nothing was queued", status: failure.status)
            }
            BatchSender.report(result, context: context)
            if wait { return try WaitCommand(batch: result.batch).run(context) }
        case .create(let template):
            BatchSender.report(try BatchSender.send(EntrySource([]), as: template, context: context), context: context)
        case .list:
            let batches = try context.send(ControlRequest(.batchList)).batches ?? []
            if context.json {
                context.printJSON(batches)
            } else {
                context.print(lines: BatchFormatter.table(batches))
            }
        case .show(let id):
            let response = try context.send(ControlRequest(.batchShow, batch: id))
            guard let batch = response.batches?.first else { throw CommandFailure(message: "no batch \(id)", status: .failure) }
            if context.json {
                context.printJSON(BatchDetail(batch: batch, hookRuns: response.hookRuns ?? []))
            } else {
                context.print(lines: BatchFormatter.detail(batch, hookRuns: response.hookRuns ?? []))
            }
        }
        return .success
    }
}

/// `batch show --json`: the batch object plus `hookRuns`.
struct BatchDetail: Encodable {
    var batch: Batch
    var hookRuns: [HookRun]

    func encode(to encoder: Encoder) throws {
        try batch.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(hookRuns, forKey: .hookRuns)
    }

    private enum Key: String, CodingKey { case hookRuns }
}
