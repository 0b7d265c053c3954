import Foundation
import XCTest

/// `transferctl completion bash|zsh|fish`: each script is valid for its shell, completes
/// commands, options and the job ids of a real daemon, stays quiet and quick when no daemon
/// runs, and offers for each command exactly the options its help names (the scripts are made
/// from the parsers, so this is the test that help and parser have not drifted apart).
final class ShellCompletionTests: IntegrationTestCase {
    private func script(_ shell: String) throws -> URL {
        let result = cli.run(["completion", shell])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertEqual(result.stderr, "", result.summary)
        let url = workDir.appendingPathComponent("completion.\(shell)")
        try result.stdout.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    private func shell(_ path: String, _ arguments: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("\(path) is missing (scripts/deps.sh installs it with the test packages)")
        }
        return cli.runner.run(URL(fileURLWithPath: path), arguments, timeout: timeout)
    }

    /// What `_transferctl` puts in COMPREPLY for the command line `words`, the last word being
    /// completed. The first word is the transferctl binary, which the script asks for ids.
    private func bashCompletions(_ script: URL, _ words: [String]) throws -> (words: [String], result: CommandResult) {
        let quoted = ([binaries.transferctl.path] + words).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let program = """
            source "$0" || exit 9
            COMP_WORDS=(\(quoted.joined(separator: " ")))
            COMP_CWORD=\(words.count)
            _transferctl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try shell("/bin/bash", ["-c", program, script.path])
        XCTAssertEqual(result.exitCode, 0, result.summary)
        return (result.stdout.split(separator: "\n").map(String.init), result)
    }

    func testBashCompletesCommandsOptionsValuesAndTheJobIDsOfARealDaemon() throws {
        let script = try script("bash")
        let syntax = try shell("/bin/bash", ["-n", script.path])
        XCTAssertEqual(syntax.exitCode, 0, "bash -n: \(syntax.summary)")
        let registered = try shell("/bin/bash", ["-c", "source \"$0\" && complete -p transferctl", script.path])
        XCTAssertEqual(registered.trimmedStdout, "complete -F _transferctl transferctl", registered.summary)

        XCTAssertEqual(try bashCompletions(script, ["dow"]).words, ["download"])
        XCTAssertEqual(try bashCompletions(script, ["re"]).words, ["resume", "retry", "resume-data"])
        XCTAssertEqual(try bashCompletions(script, ["download", "--ou"]).words, ["--output"])
        XCTAssertEqual(try bashCompletions(script, ["--json", "wait", "--pro"]).words, ["--progress"])
        XCTAssertEqual(try bashCompletions(script, ["list", "--state", "f"]).words, ["failed"])
        XCTAssertEqual(try bashCompletions(script, ["batch", ""]).words, ["submit", "create", "list", "show"])
        XCTAssertEqual(try bashCompletions(script, ["completion", "z"]).words, ["zsh"])

        try makeSource("a.bin", size: 64 * KiB)
        let first = try cli.download(nginx.url(.files, "a.bin"), to: destination("a.bin"), ["--paused"])
        let second = try cli.download(nginx.url(.files, "a.bin"), to: destination("b.bin"), ["--paused"])
        let daemon = ["--state-dir", cli.stateDir.path]
        XCTAssertEqual(Set(try bashCompletions(script, daemon + ["show", ""]).words), [String(first), String(second)])
        XCTAssertEqual(try bashCompletions(script, ["pause", "--state-dir", cli.stateDir.path, String(second)]).words,
                       [String(second)], "the options after the command name the daemon too")
        XCTAssertEqual(Set(try bashCompletions(script, daemon + ["list", "--before", ""]).words),
                       [String(first), String(second)])

        // No daemon: no ids, no message, no wait.
        let started = Date()
        let (none, result) = try bashCompletions(script, ["--state-dir", workDir.appendingPathComponent("none").path, "show", ""])
        XCTAssertEqual(none, [])
        XCTAssertEqual(result.stderr, "", result.summary)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    /// Each command's help names every option the completion offers for it, and nothing else.
    func testEachCommandsOptionsAreTheOnesItsHelpNames() throws {
        let script = try script("bash")
        let overview = cli.run(["--help"]).stdout
        let commands = try bashCompletions(script, [""]).words
        let listed = Self.section("commands", of: overview).map { String($0.prefix { $0 != " " }) }
        XCTAssertEqual(Set(commands), Set(listed), "the commands completed are the ones transferctl --help lists")
        let global = Set(Self.options(in: Self.section("global options", of: overview).joined(separator: "\n")))
            .union(["--help"])
        XCTAssertTrue(global.isSuperset(of: ["--state-dir", "--socket", "--json", "--version"]), "\(global)")
        for command in commands {
            let help = cli.run([command, "--help"])
            XCTAssertEqual(help.exitCode, 0, help.summary)
            // What the help says of another command (`see 'transferctl download --resume-data'`) is not its own.
            let own = help.stdout.replacingOccurrences(of: "transferctl (?!\(command)(?![a-z-]))[a-z][a-z-]*[^'\n]*", with: "",
                                                       options: .regularExpression)
            let named = Set(Self.options(in: own)).union(global)
            let offered = Set(try bashCompletions(script, [command, "-"]).words)
            XCTAssertEqual(offered.subtracting(named).sorted(), [], "\(command): taken but not in its --help")
            XCTAssertEqual(named.subtracting(offered).sorted(), [], "\(command): in its --help but not taken")
        }
    }

    func testZshAndFishScriptsAreValidAndComplete() throws {
        let zsh = try script("zsh")
        let zshSyntax = try shell("/usr/bin/zsh", ["-n", zsh.path])
        XCTAssertEqual(zshSyntax.exitCode, 0, "zsh -n: \(zshSyntax.summary)")
        let zshRegistered = try shell("/usr/bin/zsh", ["-c", "autoload -U compinit && compinit -u -D && source \"$0\" && print -r -- $_comps[transferctl]", zsh.path])
        XCTAssertEqual(zshRegistered.trimmedStdout, "_transferctl", zshRegistered.summary)

        let fish = try script("fish")
        let fishSyntax = try shell("/usr/bin/fish", ["--no-execute", fish.path])
        XCTAssertEqual(fishSyntax.exitCode, 0, "fish --no-execute: \(fishSyntax.summary)")
        try makeSource("f.bin", size: 64 * KiB)
        let id = try cli.download(nginx.url(.files, "f.bin"), to: destination("f.bin"), ["--paused"])
        func fishCompletions(_ line: String) throws -> [String] {
            let program = "set -gx PATH \(binaries.transferctl.deletingLastPathComponent().path) $PATH; source $argv[1]; complete -C $argv[2]"
            let result = try shell("/usr/bin/fish", ["-c", program, fish.path, line])
            XCTAssertEqual(result.exitCode, 0, result.summary)
            XCTAssertEqual(result.stderr, "", result.summary)
            return result.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
        }
        XCTAssertEqual(try fishCompletions("transferctl dow"), ["download"])
        XCTAssertEqual(try fishCompletions("transferctl download --ou"), ["--output"])
        XCTAssertEqual(try fishCompletions("transferctl --state-dir \(cli.stateDir.path) resume "), [String(id)])
        XCTAssertEqual(try fishCompletions("transferctl --state-dir \(workDir.path)/none resume "), [])
    }

    /// The lines of a section of a help text (`commands:`, then indented lines), unindented.
    private static func section(_ label: String, of help: String) -> [String] {
        let lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: label + ":") else { return [] }
        return lines[(start + 1)...].prefix { $0.hasPrefix("  ") }.map { String($0.dropFirst(2)) }
    }

    /// The options a text names: a dash that starts a word, then a letter (`-o`, `--no-schedule`),
    /// or a digit beside its long name (`-4, --ipv4`, `-6/--ipv6`).
    private static func options(in text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "(?<![A-Za-z0-9_-])(--?[A-Za-z][A-Za-z0-9-]*|-[0-9](?=(, ?|/)--))")
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).map { match in
            var option = String(text[Range(match.range, in: text)!])
            while option.hasSuffix("-") { option.removeLast() }
            return option
        }
    }
}
