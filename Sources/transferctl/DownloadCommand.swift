import FoundationEssentials
import TransferEngine

/// `transferctl download URL -o PATH [options]`: queue a download, print its id.
struct DownloadCommand: Subcommand {
    static let help = """
        usage: transferctl download URL -o PATH [options]
               transferctl download --resume-data FILE [-o PATH] [options]

        Queues a download and prints the new job's id. The file appears at PATH only once
        it is complete (and verified with --sha256).

        options:
          -o, --output PATH       destination file (required unless --resume-data gives it)
          -H, --header 'N: v'     extra request header (repeatable)
          --sha256 HEX            verify the finished file before it appears
          --overwrite             replace an existing destination
          --resume-data FILE      continue from resume data exported by 'resume-data ID'
          --limit-rate RATE       this job's bandwidth, e.g. 512K, 4M
          --priority P            high, normal or low (default normal)
          --retry N               retries after a failed attempt (default 7)
          --batch B               add to batch B
          --paused                create the job paused

        examples:
          transferctl download https://example.com/big.iso -o ~/big.iso
          transferctl download https://example.com/a.tar --sha256 9f86d0... -o /data/a.tar
        """

    var job: NewJob

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> DownloadCommand {
        let output = try arguments.option("-o", "--output")
        let headers = try arguments.options("-H", "--header")
        let sha256 = try arguments.option("--sha256")
        let overwrite = arguments.flag("--overwrite")
        let resumeFile = try arguments.option("--resume-data")
        let paused = arguments.flag("--paused")
        let common = try CommonJobOptions.parse(&arguments)
        let positionals = try arguments.positionals()
        guard positionals.count <= 1 else { throw UsageError("download takes one URL, got \(positionals.count)") }

        var resumeData: ResumeData?
        if let resumeFile {
            resumeData = try ResumeDataFile.read(resumeFile)
        }
        guard let url = positionals.first ?? resumeData?.url else {
            throw UsageError("download needs a URL (see transferctl download --help)")
        }
        guard let path = output ?? resumeData?.path else {
            throw UsageError("download needs a destination: -o PATH")
        }
        // Exported resume data carries the non-secret headers; -H replaces them.
        let requestHeaders = headers.isEmpty ? resumeData?.headers ?? [] : headers
        let job = NewJob(kind: .download, url: url, path: StatePaths.absolute(path), headers: requestHeaders,
                         sha256: sha256?.lowercased(), overwrite: overwrite, priority: common.priority,
                         batch: common.batch, limit: common.limit, retries: common.retries, paused: paused,
                         resumeData: resumeData)
        return DownloadCommand(job: job)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response = try context.send(ControlRequest(.add, job: job))
        guard let created = response.job else { throw CommandFailure(message: "the daemon did not return the job", status: .failure) }
        if context.json { context.printJSON(created) } else { context.print(created.id.description) }
        return .success
    }
}

/// Options every job-creating command takes.
struct CommonJobOptions {
    var priority = Priority.normal
    var batch: Int64?
    var limit: Int64?
    var retries: Int?

    static func parse(_ arguments: inout ArgumentList) throws -> CommonJobOptions {
        var options = CommonJobOptions()
        if let text = try arguments.option("--priority") {
            guard let priority = Priority(rawValue: text) else {
                throw UsageError("--priority must be high, normal or low, got '\(text)'")
            }
            options.priority = priority
        }
        if let text = try arguments.option("--batch") {
            guard let batch = Int64(text), batch > 0 else { throw UsageError("--batch needs a batch id, got '\(text)'") }
            options.batch = batch
        }
        if let text = try arguments.option("--limit-rate") {
            do { options.limit = try Rate.parse(text) } catch { throw UsageError(error.message) }
        }
        if let text = try arguments.option("--retry") {
            guard let retries = Int(text), retries >= 0 else { throw UsageError("--retry needs a number of 0 or more, got '\(text)'") }
            options.retries = retries
        }
        return options
    }
}

/// Reads an exported resume-data document.
enum ResumeDataFile {
    static func read(_ path: String) throws -> ResumeData {
        guard let bytes = FileReader.contents(of: path) else {
            throw UsageError("cannot read resume data from \(path)")
        }
        do {
            return try JSONDecoder().decode(ResumeData.self, from: Data(bytes))
        } catch {
            throw UsageError("\(path) is not resume data: \(DecodingSummary.describe(error))")
        }
    }
}
