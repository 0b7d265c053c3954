import TransferEngine

/// The CLI's entry: global options, then one subcommand.
enum TransferCtl {
    /// Every command, in the order the man page and the completion scripts list them.
    static var commands: KeyValuePairs<String, any Subcommand.Type> { [
        "download": DownloadCommand.self,
        "upload": UploadCommand.self,
        "list": ListCommand.self,
        "show": ShowCommand.self,
        "pause": TransitionCommand.self,
        "resume": TransitionCommand.self,
        "cancel": TransitionCommand.self,
        "retry": TransitionCommand.self,
        "wait": WaitCommand.self,
        "resume-data": ResumeDataCommand.self,
        "stats": StatsCommand.self,
        "modify": ModifyCommand.self,
        "limit": LimitCommand.self,
        "events": EventsCommand.self,
        "watch": WatchCommand.self,
        "batch": BatchCommand.self,
        "backup": BackupCommand.self,
        "prune": PruneCommand.self,
        "completion": CompletionCommand.self,
    ] }

    static func command(named name: String) -> (any Subcommand.Type)? {
        commands.first { $0.key == name }?.value
    }

    static func run(_ arguments: [String]) -> ExitStatus {
        if arguments == ["--man"] {
            // Hidden: the man page, from the help texts (man/transferctl.1 holds its output).
            FileHandle.standardOutput.write(Manual.page)
            return .success
        }
        var list = ArgumentList(arguments)
        let global: GlobalOptions
        do {
            global = try GlobalOptions.extract(from: &list)
        } catch {
            return fail(error.message, .usage)
        }
        if global.version {
            FileHandle.standardOutput.write("transferctl \(TransferdVersion.current)\n")
            return .success
        }
        guard let name = list.takeSubcommand() else {
            if list.wantsHelp || arguments.isEmpty {
                FileHandle.standardOutput.write(Help.overview)
                return .success
            }
            return fail("missing command (see transferctl --help)", .usage)
        }
        guard let command = command(named: name) else {
            let closest = Spelling.closest(to: name, among: commands.map(\.key))
            return fail("unknown command '\(name)'\(closest.map { "; did you mean '\($0)'?" } ?? "") (see transferctl --help)",
                        .usage)
        }
        if list.wantsHelp {
            FileHandle.standardOutput.write(command.help.hasSuffix("\n") ? command.help : command.help + "\n")
            return .success
        }
        let context = Context(global: global)
        do {
            var parsed = try command.parse(name: name, &list)
            if let extra = list.remaining.first {
                throw UsageError("unexpected argument '\(extra)' for \(name) (see transferctl \(name) --help)")
            }
            return try parsed.run(context)
        } catch let error as UsageError {
            return fail(error.message, .usage)
        } catch let error as CommandFailure {
            return fail(error.message, error.status)
        } catch let error as ControlClient.Failure {
            if case .cannotConnect(let path, let reason) = error {
                let paths = global.paths
                return fail("cannot reach transferd at \(path): \(reason) (state directory \(paths.directory); "
                    + "start a daemon there with: \(paths.daemonCommand))", .unreachable)
            }
            return fail(error.message, .failure)
        } catch {
            return fail("\(error)", .failure)
        }
    }

    static func fail(_ message: String, _ status: ExitStatus) -> ExitStatus {
        Context.note("transferctl: \(message)")
        return status
    }
}

/// A subcommand: parses its own arguments, then runs against the daemon.
protocol Subcommand {
    static var help: String { get }
    static func parse(name: String, _ arguments: inout ArgumentList) throws -> Self
    mutating func run(_ context: Context) throws -> ExitStatus
}

/// Bad command-line input: exit 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// The command ran and the outcome is a failure, with the status to exit with.
struct CommandFailure: Error {
    var message: String
    var status: ExitStatus
}
