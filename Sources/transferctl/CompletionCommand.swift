import TransferEngine

/// `transferctl completion bash|zsh|fish`: print a shell completion script.
struct CompletionCommand: Subcommand {
    static let help = """
        usage: transferctl completion bash|zsh|fish

        Prints a completion script for the shell: commands, each command's options, and the
        ids of the daemon's jobs (asked of it with 'transferctl list --quiet'; nothing when
        no daemon answers). It needs no daemon itself.

        examples:
          source <(transferctl completion bash)
          transferctl completion bash > ~/.local/share/bash-completion/completions/transferctl
          transferctl completion zsh > "${fpath[1]}/_transferctl"
          transferctl completion fish > ~/.config/fish/completions/transferctl.fish
        """

    enum Shell: String, CaseIterable {
        case bash, zsh, fish
    }

    var shell: Shell

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> CompletionCommand {
        let words = try arguments.positionals()
        let names = Shell.allCases.map(\.rawValue).joined(separator: ", ")
        guard words.count == 1, let word = words.first else { throw UsageError("completion takes one shell: \(names)") }
        guard let shell = Shell(rawValue: word) else { throw UsageError("no completion for '\(word)': use \(names)") }
        return CompletionCommand(shell: shell)
    }

    func run(_ context: Context) throws -> ExitStatus {
        let table = CompletionTable.make()
        let script = switch shell {
        case .bash: BashCompletion.script(table)
        case .zsh: ZshCompletion.script(table)
        case .fish: FishCompletion.script(table)
        }
        FileHandle.standardOutput.write(script)
        return .success
    }
}
