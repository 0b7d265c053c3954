/// The options each command takes, read from its own parser rather than listed a second time.
/// A parser takes its options first and refuses what is left over, so a parse of an argument
/// list that holds only an option no command knows asks for every option the command knows
/// (`ArgumentList.known`) before it fails. The completion scripts offer these; a test checks
/// that each command's help names every one of them and no other.
enum OptionCatalog {
    struct Options {
        /// In the order the parser asks for them.
        var names: [String]
        /// Those that take a value.
        var valued: Set<String>
    }

    /// An option no parser knows (an ASCII control character cannot come from a completion).
    private static let probe = "--\u{1}"

    /// The options of `command`; `verb` first for a command that needs one (`batch submit`).
    static func options(of command: any Subcommand.Type, name: String, verb: String?) -> Options {
        var list = ArgumentList((verb.map { [$0] } ?? []) + [probe])
        _ = try? command.parse(name: name, &list)
        return Options(names: list.known, valued: list.valued)
    }

    /// The options every command takes (`GlobalOptions`), and `--help`.
    static var global: Options {
        var list = ArgumentList([])
        _ = try? GlobalOptions.extract(from: &list)
        return Options(names: list.known + ["--help"], valued: list.valued)
    }
}
