import TransferEngine

/// What the completion scripts complete, gathered from what the CLI itself uses: the command
/// table (`TransferCtl.commands`), each parser's options (`OptionCatalog`), and the help texts
/// for the rest (verbs, which commands take job ids, the descriptions).
struct CompletionTable {
    struct Command {
        var name: String
        /// Its line in `transferctl --help`.
        var summary: String
        var options: OptionCatalog.Options
        /// Words that may come first after the command (`batch submit`, `completion bash`).
        var verbs: [String]
        /// Whether its positional arguments are job ids (`ID` in its synopsis).
        var takesJobIDs: Bool
    }

    var commands: [Command]
    var global: OptionCatalog.Options
    /// What each option does, from the help text that lists it.
    var descriptions: [String: String]

    /// The values of options that take one of a few words.
    static let choices: [String: [String]] = [
        "--state": JobState.allCases.map(\.rawValue),
        "--priority": Priority.allCases.map(\.rawValue),
        "--method": ["POST", "PUT"],
    ]
    /// Options whose value is a job id.
    static let jobIDOptions: Set<String> = ["--before"]
    /// Options whose value is a directory.
    static let directoryOptions: Set<String> = ["--state-dir"]

    static func make() -> CompletionTable {
        let overview = HelpText(Help.overview)
        var descriptions: [String: String] = [:]
        var summaries: [String: String] = [:]
        for item in overview.items {
            let word = String(item.term.prefix { $0 != " " })
            if summaries[word] == nil, TransferCtl.command(named: word) != nil { summaries[word] = item.description }
        }
        var commands: [Command] = []
        for (name, type) in TransferCtl.commands {
            let help = HelpText(type.help)
            let synopses = help.usage.map(Self.words)
                .filter { $0.count > 1 && $0[0] == "transferctl" && $0[1] == name }
            let verbs = synopses.compactMap { $0.count > 2 ? $0[2] : nil }
                .flatMap { $0.split(separator: "|").map(String.init) }
                .filter { $0.allSatisfy { $0.isASCII && $0.isLowercase } }
            let takesJobIDs = synopses.contains { words in
                words.indices.dropFirst(2).contains { index in
                    Self.bare(words[index]) == "ID" && !Self.bare(words[index - 1]).hasPrefix("-")
                }
            }
            for item in help.items {
                for option in HelpText.options(in: item.term) where descriptions[option] == nil {
                    descriptions[option] = item.description
                }
            }
            commands.append(Command(name: name, summary: summaries[name] ?? "",
                                    options: OptionCatalog.options(of: type, name: name, verb: verbs.first),
                                    verbs: verbs, takesJobIDs: takesJobIDs))
        }
        for item in overview.items {
            for option in HelpText.options(in: item.term) where descriptions[option] == nil {
                descriptions[option] = item.description
            }
        }
        descriptions["--help"] = descriptions["--help"] ?? "print help"
        descriptions["--version"] = descriptions["--version"] ?? "print the version"
        return CompletionTable(commands: commands, global: OptionCatalog.global, descriptions: descriptions)
    }

    /// Every option that takes a value, of any command or global.
    var valued: [String] {
        var all = global.names.filter(global.valued.contains)
        for command in commands {
            for name in command.options.names where command.options.valued.contains(name) && !all.contains(name) {
                all.append(name)
            }
        }
        return all
    }

    /// The words of a synopsis, without what it does after two spaces (`limit`'s).
    private static func words(_ synopsis: String) -> [String] {
        let bare = synopsis.firstRange(of: "  ").map { synopsis[..<$0.lowerBound] } ?? synopsis[...]
        return bare.split(separator: " ").map(String.init)
    }

    /// `[ID...]` as `ID`: a synopsis word without brackets, bars and dots.
    private static func bare(_ word: String) -> String {
        String(word.filter { !"[](){}|.".contains($0) })
    }
}
