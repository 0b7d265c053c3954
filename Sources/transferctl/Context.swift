import FoundationEssentials
import TransferEngine

/// What a subcommand runs against: the daemon's socket and the output format.
struct Context {
    var global: GlobalOptions

    var json: Bool { global.json }

    /// Sends one request; a refusal becomes a `CommandFailure` with the matching exit status.
    func send(_ request: ControlRequest, timeout: Double? = nil) throws -> ControlResponse {
        let client = try ControlClient(socketPath: global.paths.socket)
        return try checked(client.send(request, timeout: timeout))
    }

    /// The response, or its refusal as a `CommandFailure` with the matching exit status.
    func checked(_ response: ControlResponse) throws -> ControlResponse {
        if let error = response.error, !response.ok {
            throw CommandFailure(message: error.message, status: Self.status(for: error.code))
        }
        return response
    }

    static func status(for code: ControlError.Code) -> ExitStatus {
        switch code {
        case .badRequest, .invalidArgument, .tooLarge, .unsupportedVersion: .usage
        case .unknownJob, .unknownBatch, .illegalTransition, .destinationTaken, .forbidden, .internal: .failure
        }
    }

    /// Queues a job and prints its id (`--json`: the job).
    func queue(_ job: NewJob) throws -> ExitStatus {
        guard let created = try send(ControlRequest(.add, job: job)).job else {
            throw CommandFailure(message: "the daemon did not return the job", status: .failure)
        }
        if json { printJSON(created) } else { print(created.id.description) }
        return .success
    }

    /// Prints a value as indented JSON on stdout, keys in the order the documents list them
    /// (strings exact: the encoder escapes controls).
    func printJSON<Value: Encodable>(_ value: Value) {
        guard var bytes = try? JSONStreamEncoder(pretty: true).encode(value) else { return }
        bytes.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(bytes)
    }

    /// Prints a value as JSON on one line (`events --json`).
    func printJSONLine<Value: Encodable>(_ value: Value) {
        guard var bytes = try? JSONStreamEncoder().encode(value) else { return }
        bytes.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(bytes)
    }

    /// One line of human output. Every human line goes through here (or `note`), so that what
    /// a server, a file name or a message holds is shown escaped, never obeyed by the terminal
    /// (`TerminalText`): a line break inside `line` is shown as `\n`.
    func print(_ line: String) {
        FileHandle.standardOutput.write(TerminalText.escape(line) + "\n")
    }

    /// Lines of human output, escaped like `print`, in one write: a `wait` or `list` of
    /// thousands of jobs makes one system call, not one per line.
    func print(lines: [String]) {
        guard !lines.isEmpty else { return }
        FileHandle.standardOutput.write(lines.map { TerminalText.escape($0) + "\n" }.joined())
    }

    /// One line of human output on stderr (an error, a hint), escaped like `print`.
    static func note(_ line: String) {
        FileHandle.standardError.write(TerminalText.escape(line) + "\n")
    }
}
