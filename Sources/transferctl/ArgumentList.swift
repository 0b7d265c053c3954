import TransferEngine

/// The command line as a list to take options from, in any order.
struct ArgumentList {
    private(set) var remaining: [String]

    init(_ arguments: [String]) { remaining = arguments }

    var wantsHelp: Bool { remaining.contains("--help") || remaining.contains("-h") }

    /// The first argument that is not an option: the subcommand's name.
    mutating func takeSubcommand() -> String? {
        guard let index = remaining.firstIndex(where: { !$0.hasPrefix("-") }) else { return nil }
        return remaining.remove(at: index)
    }

    /// Removes `--name` (or a short alias); true when it was there.
    mutating func flag(_ names: String...) -> Bool {
        guard let index = remaining.firstIndex(where: names.contains) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes `--name VALUE` or `--name=VALUE`; the last one given wins.
    mutating func option(_ names: String...) throws(UsageError) -> String? {
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

    /// Every value of a repeatable option, in order.
    mutating func options(_ names: String...) throws(UsageError) -> [String] {
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

    /// The positional arguments left once every option has been taken.
    mutating func positionals() throws(UsageError) -> [String] {
        if let option = remaining.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw UsageError("unknown option '\(option)'")
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

    static func extract(from list: inout ArgumentList) throws(UsageError) -> GlobalOptions {
        let stateDirectory = try list.option("--state-dir")
        let socket = try list.option("--socket")
        let json = list.flag("--json")
        return GlobalOptions(paths: StatePaths(stateDirectory: stateDirectory, socket: socket), json: json)
    }
}
