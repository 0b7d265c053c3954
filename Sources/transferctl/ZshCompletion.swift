import TransferEngine

/// `transferctl completion zsh`: a zsh completion function made from the `CompletionTable`,
/// with each command's and option's description. Job ids as for bash (`BashCompletion`).
enum ZshCompletion {
    static func script(_ table: CompletionTable) -> String {
        var lines = [
            "#compdef transferctl",
            "# zsh completion for transferctl \(TransferdVersion.current), made by 'transferctl completion zsh'",
            "# from the commands' own options (regenerate it after an upgrade). Use one of:",
            "#   source <(transferctl completion zsh)                   # in ~/.zshrc, after compinit",
            "#   transferctl completion zsh > \"${fpath[1]}/_transferctl\"  # then start a new shell",
            "",
            "# Job ids of the daemon that the words of the command line name; nothing when none answers.",
            "_transferctl_ids() {",
            "    local -a daemon",
            "    local i",
            "    for (( i = 2; i <= $#words; i++ )); do",
            "        case $words[i] in",
            "            --state-dir|--socket) daemon+=($words[i] $words[i+1]); (( i++ )) ;;",
            "            --state-dir=*|--socket=*) daemon+=($words[i]) ;;",
            "        esac",
            "    done",
            "    local -a ids",
            "    ids=(${(f)\"$(timeout 2 $words[1] $daemon list --quiet 2>/dev/null </dev/null)\"})",
            "    compadd -a ids",
            "}",
            "",
            "# Whether option $2 of command $1 takes a value.",
            "_transferctl_takes_value() {",
            "    case $2 in (\(pattern(table.global.names.filter(table.global.valued.contains)))) return 0 ;; esac",
            "    case $1 in",
        ]
        for command in table.commands {
            let valued = command.options.names.filter(command.options.valued.contains)
            guard !valued.isEmpty else { continue }
            lines.append("        (\(command.name)) case $2 in (\(pattern(valued)))) return 0 ;; esac ;;")
        }
        lines += [
            "    esac",
            "    return 1",
            "}",
            "",
            "_transferctl() {",
            "    local cur=$words[CURRENT] prev=$words[CURRENT-1]",
            "    local command= argument= i",
            "    for (( i = 2; i < CURRENT; i++ )); do",
            "        if [[ $words[i] == -* ]]; then",
            "            _transferctl_takes_value \"$command\" \"$words[i]\" && (( i++ ))",
            "        elif [[ -z $command ]]; then",
            "            command=$words[i]",
            "        elif [[ -z $argument ]]; then",
            "            argument=$words[i]",
            "        fi",
            "    done",
            "    if (( CURRENT > 2 )) && [[ $prev == -* ]] && _transferctl_takes_value \"$command\" \"$prev\"; then",
            "        case $prev in",
        ]
        for (option, words) in CompletionTable.choices.sorted(by: { $0.key < $1.key }) {
            lines.append("            (\(option)) compadd -- \(words.joined(separator: " ")) ;;")
        }
        for option in CompletionTable.jobIDOptions.sorted() {
            lines.append("            (\(option)) _transferctl_ids ;;")
        }
        for option in CompletionTable.directoryOptions.sorted() {
            lines.append("            (\(option)) _files -/ ;;")
        }
        lines += [
            "            (*) _files ;;",
            "        esac",
            "        return",
            "    fi",
            "    if [[ $cur == -* ]]; then",
            "        local -a options",
            "        options=(\(described(table.global.names, table)))",
            "        case $command in",
        ]
        for command in table.commands where !command.options.names.isEmpty {
            lines.append("            (\(command.name)) options+=(\(described(command.options.names, table))) ;;")
        }
        lines += [
            "        esac",
            "        _describe -t options option options",
            "        return",
            "    fi",
            "    if [[ -z $command ]]; then",
            "        local -a commands",
            "        commands=(",
        ]
        for command in table.commands {
            lines.append("            " + quoted(command.name + ":" + command.summary))
        }
        lines += [
            "        )",
            "        _describe -t commands command commands",
            "        return",
            "    fi",
            "    case $command in",
        ]
        let idCommands = table.commands.filter(\.takesJobIDs).map(\.name)
        if !idCommands.isEmpty {
            lines.append("        (\(idCommands.joined(separator: "|"))) _transferctl_ids ;;")
        }
        for command in table.commands where !command.verbs.isEmpty {
            lines.append("        (\(command.name)) if [[ -z $argument ]]; then compadd -- \(command.verbs.joined(separator: " ")); else _files; fi ;;")
        }
        lines += [
            "        (*) _files ;;",
            "    esac",
            "}",
            "",
            "if [[ $funcstack[1] == _transferctl ]]; then",
            "    _transferctl \"$@\"",
            "else",
            "    compdef _transferctl transferctl",
            "fi",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    private static func pattern(_ options: [String]) -> String {
        options.joined(separator: "|")
    }

    /// `'--output:destination file'` entries for `_describe` (a colon in a name escaped).
    private static func described(_ options: [String], _ table: CompletionTable) -> String {
        options.map { option in
            let description = table.descriptions[option].map { ":" + $0 } ?? ""
            return quoted(option.replacing(":", with: "\\:") + description)
        }.joined(separator: " ")
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
