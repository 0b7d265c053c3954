import TransferEngine

/// `transferctl completion fish`: fish completions made from the `CompletionTable`, with each
/// command's and option's description. Job ids as for bash (`BashCompletion`).
enum FishCompletion {
    static func script(_ table: CompletionTable) -> String {
        let valued = table.valued
        var lines = [
            "# fish completion for transferctl \(TransferdVersion.current), made by 'transferctl completion fish'",
            "# from the commands' own options (regenerate it after an upgrade). Use one of:",
            "#   transferctl completion fish | source",
            "#   transferctl completion fish > ~/.config/fish/completions/transferctl.fish",
            "",
            "# The words of the command line that are not options or their values: the command first.",
            "function __transferctl_positionals",
            "    set -l words (commandline -opc)",
            "    set -e words[1]",
            "    set -l skip 0",
            "    for word in $words",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch $word",
            "            case \(valued.joined(separator: " "))",
            "                set skip 1",
            "            case '-*'",
            "            case '*'",
            "                echo $word",
            "        end",
            "    end",
            "end",
            "",
            "# Whether the command is one of the arguments (any command when none are given).",
            "function __transferctl_using",
            "    set -l positionals (__transferctl_positionals)",
            "    test (count $positionals) -ge 1; or return 1",
            "    test (count $argv) -eq 0; or contains -- $positionals[1] $argv",
            "end",
            "",
            "# Whether the command is $argv[1] and nothing follows it yet.",
            "function __transferctl_needs_verb",
            "    set -l positionals (__transferctl_positionals)",
            "    test (count $positionals) -eq 1; and test $positionals[1] = $argv[1]",
            "end",
            "",
            "# Job ids of the daemon that the command line names; nothing when none answers.",
            "function __transferctl_ids",
            "    set -l words (commandline -opc)",
            "    set -l daemon",
            "    for i in (seq 2 (count $words))",
            "        switch $words[$i]",
            "            case --state-dir --socket",
            "                set -a daemon $words[$i] $words[(math $i + 1)]",
            "            case '--state-dir=*' '--socket=*'",
            "                set -a daemon $words[$i]",
            "        end",
            "    end",
            "    timeout 2 $words[1] $daemon list --quiet 2>/dev/null </dev/null",
            "end",
            "",
        ]
        for command in table.commands {
            lines.append("complete -c transferctl -f -n 'not __transferctl_using' -a \(command.name) -d \(quoted(command.summary))")
        }
        lines.append("")
        lines += table.global.names.map { option($0, options: table.global, condition: nil, table) }
        for command in table.commands {
            let condition = "__transferctl_using \(command.name)"
            lines.append("")
            lines += command.options.names.map { option($0, options: command.options, condition: condition, table) }
            if command.takesJobIDs {
                lines.append("complete -c transferctl -f -n \(quoted(condition)) -a '(__transferctl_ids)'")
            }
            if !command.verbs.isEmpty {
                lines.append("complete -c transferctl -f -n \(quoted("__transferctl_needs_verb \(command.name)"))"
                    + " -a \(quoted(command.verbs.joined(separator: " ")))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One option: `-s o` or `-l output`, what its value completes to, its description.
    private static func option(_ name: String, options: OptionCatalog.Options, condition: String?,
                               _ table: CompletionTable) -> String {
        var words = ["complete -c transferctl"]
        if let condition { words.append("-n " + quoted(condition)) }
        words.append(name.hasPrefix("--") ? "-l " + name.dropFirst(2) : "-s " + name.dropFirst())
        if options.valued.contains(name) {
            if let choices = CompletionTable.choices[name] {
                words.append("-x -a " + quoted(choices.joined(separator: " ")))
            } else if CompletionTable.jobIDOptions.contains(name) {
                words.append("-x -a '(__transferctl_ids)'")
            } else if CompletionTable.directoryOptions.contains(name) {
                words.append("-x -a '(__fish_complete_directories)'")
            } else {
                words.append("-r -F")
            }
        }
        if let description = table.descriptions[name] { words.append("-d " + quoted(description)) }
        return words.joined(separator: " ")
    }

    /// Fish's single quotes: `\'` and `\\` inside.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }
}
