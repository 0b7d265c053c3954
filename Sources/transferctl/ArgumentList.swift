import TransferEngine

/// The command line as a list to take options from, in any order. It remembers every option
/// it was asked for: once a command's parser has taken its options, those are the options the
/// command knows (`OptionCatalog`), which the completion scripts offer and a mistyped option is
/// matched against.
struct ArgumentList {
    private(set) var remaining: [String]
    /// The options asked for so far, in order: flags and options that take a value.
    private(set) var known: [String] = []
    /// Those of `known` that take a value.
    private(set) var valued: Set<String> = []

    init(_ arguments: [String]) { remaining = arguments }

    private mutating func note(_ names: [String], valued takesValue: Bool) {
        for name in names where !known.contains(name) { known.append(name) }
        if takesValue { valued.formUnion(names) }
    }

    var wantsHelp: Bool { remaining.contains("--help") || remaining.contains("-h") }

    /// The first argument that is not an option: the subcommand's name.
    mutating func takeSubcommand() -> String? {
        guard let index = remaining.firstIndex(where: { !$0.hasPrefix("-") }) else { return nil }
        return remaining.remove(at: index)
    }

    /// Removes `--name` (or a short alias); true when it was there.
    mutating func flag(_ names: String...) -> Bool {
        note(names, valued: false)
        guard let index = remaining.firstIndex(where: names.contains) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes `--name VALUE` or `--name=VALUE`; the last one given wins.
    mutating func option(_ names: String...) throws(UsageError) -> String? {
        note(names, valued: true)
        var found: String?
        while let index = remaining.firstIndex(where: { argument in
            names.contains(argument) || names.contains { argument.hasPrefix($0 + "=") && $0.hasPrefix("--") }
        }) {
            let argument = remaining.remove(at: index)
            if let equals = argument.firstIndex(of: "="), names.contains(String(argument[..<equals])) {
                found = String(argument[argument.index(after: equals)...])
                continue
            }
            guard index < remaining.count else { throw UsageError("\(argument) needs a value") }
            found = remaining.remove(at: index)
        }
        return found
    }

    /// An option a command refuses with a reason rather than as unknown (`cancel --all`): it
    /// is not among the options the command knows, so completion does not offer it.
    mutating func refuse(_ name: String, _ message: String) throws(UsageError) {
        if remaining.contains(name) { throw UsageError(message) }
    }

    /// Every value of a repeatable option, in order.
    mutating func options(_ names: String...) throws(UsageError) -> [String] {
        note(names, valued: true)
        var values: [String] = []
        while let index = remaining.firstIndex(where: names.contains) {
            let argument = remaining.remove(at: index)
            guard index < remaining.count else { throw UsageError("\(argument) needs a value") }
            values.append(remaining.remove(at: index))
        }
        return values
    }

    /// Every value of several repeatable options (`--NAME VALUE` or `--NAME=VALUE`), with the
    /// option each came with, in the order they were given on the line.
    mutating func interleavedOptions(_ names: String...) throws(UsageError) -> [(option: String, value: String)] {
        note(names, valued: true)
        var values: [(option: String, value: String)] = []
        var index = 0
        while index < remaining.count {
            let argument = remaining[index]
            if names.contains(argument) {
                guard index + 1 < remaining.count else { throw UsageError("\(argument) needs a value") }
                values.append((argument, remaining[index + 1]))
                remaining.removeSubrange(index...index + 1)
            } else if let equals = argument.firstIndex(of: "="), names.contains(String(argument[..<equals])) {
                values.append((String(argument[..<equals]), String(argument[argument.index(after: equals)...])))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return values
    }

    /// The positional arguments left once every option has been taken. An option left over is
    /// unknown: it is refused, naming the closest known one when it looks like a typo of it.
    mutating func positionals() throws(UsageError) -> [String] {
        if let option = remaining.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            let name = option.hasPrefix("--") ? String(option.prefix { $0 != "=" }) : option
            guard let closest = Spelling.closest(to: name, among: known + ["--help"]) else {
                throw UsageError("unknown option '\(name)'")
            }
            throw UsageError("unknown option '\(name)'; did you mean '\(closest)'?")
        }
        defer { remaining.removeAll() }
        return remaining
    }

    /// `--NAME N`: a whole number within its documented range (`NumericLimits`), else exit 2.
    mutating func number<Value>(_ name: String, _ limit: NumericLimit<Value>) throws(UsageError) -> Value? {
        guard let text = try option(name) else { return nil }
        return try Self.number(text, limit, name)
    }

    /// `--batch B`.
    mutating func batch() throws(UsageError) -> Int64? {
        try number("--batch", NumericLimits.id)
    }

    static func number<Value>(_ text: String, _ limit: NumericLimit<Value>, _ field: String) throws(UsageError) -> Value {
        do { return try limit.parse(text, field) } catch { throw UsageError(error.message) }
    }

    /// Job ids from the positional arguments.
    mutating func jobIDs() throws(UsageError) -> [JobID] {
        try positionals().map { text throws(UsageError) in
            guard let id = JobID(text) else { throw UsageError("'\(text)' is not a job id") }
            return id
        }
    }
}

/// Options every command takes, anywhere on the line.
struct GlobalOptions {
    var paths: StatePaths
    var json: Bool
    /// `--version`: print it and exit.
    var version = false

    static func extract(from list: inout ArgumentList) throws(UsageError) -> GlobalOptions {
        let stateDirectory = try list.option("--state-dir")
        let socket = try list.option("--socket")
        let json = list.flag("--json")
        let version = list.flag("--version")
        return GlobalOptions(paths: StatePaths(stateDirectory: stateDirectory, socket: socket), json: json, version: version)
    }
}
