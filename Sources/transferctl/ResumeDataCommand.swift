import TransferEngine

/// `transferctl resume-data ID`: print the job's resume data.
struct ResumeDataCommand: Subcommand {
    static let help = """
        usage: transferctl resume-data ID

        Prints the job's resume data: a versioned JSON document (docs/resume-data.md) that
        'transferctl download --resume-data FILE' continues from.

        example:
          transferctl resume-data 3 > job3.resume.json
        """

    var id: JobID

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> ResumeDataCommand {
        let ids = try arguments.jobIDs()
        guard ids.count == 1 else { throw UsageError("resume-data takes one job id") }
        return ResumeDataCommand(id: ids[0])
    }

    func run(_ context: Context) throws -> ExitStatus {
        let response = try context.send(ControlRequest(.resumeData, ids: [id]))
        guard let data = response.resumeData else { throw CommandFailure(message: "no resume data for job \(id)", status: .failure) }
        context.printJSON(data)
        return .success
    }
}
