import TransferEngine

/// `transferctl completion bash`: a bash completion script made from the `CompletionTable`.
/// Job ids come from `transferctl list --quiet`, asked of the daemon the command line names
/// (its `--state-dir`/`--socket`), within 2 seconds and with errors discarded: no daemon, no ids.
enum BashCompletion {
    static func script(_ table: CompletionTable) -> String {
        var lines = [
            "# bash completion for transferctl \(TransferdVersion.current), made by 'transferctl completion bash'",
            "# from the commands' own options (regenerate it after an upgrade). Use one of:",
            "#   source <(transferctl completion bash)                  # in ~/.bashrc",
            "#   transferctl completion bash > ~/.local/share/bash-completion/completions/transferctl",
            "",
            "# Job ids of the daemon that the words of the command line name; nothing when none answers.",
            "_transferctl_ids() {",
            "    local program=$1 i",
            "    local -a daemon=()",
            "    shift",
            "    for ((i = 1; i <= $#; i++)); do",
            "        case ${!i} in",
            "            --state-dir|--socket) daemon+=(\"${!i}\"); ((i++)); daemon+=(\"${!i}\") ;;",
            "            --state-dir=*|--socket=*) daemon+=(\"${!i}\") ;;",
            "        esac",
            "    done",
            "    timeout 2 \"$program\" \"${daemon[@]}\" list --quiet 2>/dev/null </dev/null",
            "}",
            "",
            "# Whether option $2 of command $1 takes a value.",
            "_transferctl_takes_value() {",
            "    case $2 in \(pattern(table.global.names.filter(table.global.valued.contains))) return 0 ;; esac",
            "    case $1 in",
        ]
        for command in table.commands {
            let valued = command.options.names.filter(command.options.valued.contains)
            guard !valued.isEmpty else { continue }
            lines.append("        \(command.name)) case $2 in \(pattern(valued)) return 0 ;; esac ;;")
        }
        lines += [
            "    esac",
            "    return 1",
            "}",
            "",
            "_transferctl() {",
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
            "    local command=\"\" argument=\"\" word i",
            "    for ((i = 1; i < COMP_CWORD; i++)); do",
            "        word=${COMP_WORDS[i]}",
            "        if [[ $word == -* ]]; then",
            "            _transferctl_takes_value \"$command\" \"$word\" && ((i++))",
            "        elif [[ -z $command ]]; then",
            "            command=$word",
            "        elif [[ -z $argument ]]; then",
            "            argument=$word",
            "        fi",
            "    done",
            "    if ((COMP_CWORD > 1)) && [[ $prev == -* ]] && _transferctl_takes_value \"$command\" \"$prev\"; then",
            "        case $prev in",
        ]
        for (option, words) in CompletionTable.choices.sorted(by: { $0.key < $1.key }) {
            lines.append("            \(option)) COMPREPLY=($(compgen -W \(quoted(words.joined(separator: " "))) -- \"$cur\")) ;;")
        }
        for option in CompletionTable.jobIDOptions.sorted() {
            lines.append("            \(option)) COMPREPLY=($(compgen -W \"$(_transferctl_ids \"${COMP_WORDS[@]}\")\" -- \"$cur\")) ;;")
        }
        for option in CompletionTable.directoryOptions.sorted() {
            lines.append("            \(option)) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")) ;;")
        }
        lines += [
            "            *) \(files) ;;",
            "        esac",
            "        return",
            "    fi",
            "    if [[ $cur == -* ]]; then",
            "        local options=\(quoted(table.global.names.joined(separator: " ")))",
            "        case $command in",
        ]
        for command in table.commands where !command.options.names.isEmpty {
            lines.append("            \(command.name)) options+=\(quoted(" " + command.options.names.joined(separator: " "))) ;;")
        }
        lines += [
            "        esac",
            "        COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))",
            "        return",
            "    fi",
            "    if [[ -z $command ]]; then",
            "        COMPREPLY=($(compgen -W \(quoted(table.commands.map(\.name).joined(separator: " "))) -- \"$cur\"))",
            "        return",
            "    fi",
            "    case $command in",
        ]
        let idCommands = table.commands.filter(\.takesJobIDs).map(\.name)
        if !idCommands.isEmpty {
            lines.append("        \(idCommands.joined(separator: "|"))) COMPREPLY=($(compgen -W \"$(_transferctl_ids \"${COMP_WORDS[@]}\")\" -- \"$cur\")) ;;")
        }
        for command in table.commands where !command.verbs.isEmpty {
            lines.append("        \(command.name)) [[ -n $argument ]] && { \(files) ; } || "
                + "COMPREPLY=($(compgen -W \(quoted(command.verbs.joined(separator: " "))) -- \"$cur\")) ;;")
        }
        lines += [
            "        *) \(files) ;;",
            "    esac",
            "}",
            "",
            "complete -F _transferctl transferctl",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// File names, shown as such (a `/` after a directory).
    private static let files = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))"

    /// `-o|--output` for a `case` pattern.
    private static func pattern(_ options: [String]) -> String {
        options.joined(separator: "|") + ")"
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
