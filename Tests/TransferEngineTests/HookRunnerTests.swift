#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import TransferEngine

@Suite struct HookRunnerTests {
    private func run(_ command: String, environment: [String: String] = [:], timeout: Int = 10_000) -> HookResult {
        HookRunner.run(HookCommand(command: command, environment: environment, timeoutMilliseconds: timeout))
    }

    private func seconds(_ body: () -> HookResult) -> (HookResult, Double) {
        let started = ContinuousClock.now
        let result = body()
        let duration = started.duration(to: .now).components
        return (result, Double(duration.seconds) + Double(duration.attoseconds) / 1e18)
    }

    /// Alive and not a zombie waiting for a reaper (a container's pid 1 may not reap orphans).
    private func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    private func waitUntilGone(_ pid: Int32) -> Bool {
        for _ in 0..<100 where isRunning(pid) { usleep(20_000) }
        return !isRunning(pid)
    }

    @Test func passesTheExitStatusThrough() {
        let failed = run("exit 3")
        #expect(failed.exitStatus == 3)
        #expect(failed.signal == nil)
        #expect(!failed.timedOut && failed.startError == nil)
        #expect(!failed.succeeded)
        #expect(failed.summary == "exit 3")
        let fine = run("exit 0")
        #expect(fine.exitStatus == 0)
        #expect(fine.succeeded)
        #expect(fine.summary == "exit 0")
    }

    @Test func hookSeesItsVariablesOverTheDaemonsEnvironment() {
        let result = run(#"printf %s "$TRANSFERD_JOB_ID""#, environment: ["TRANSFERD_JOB_ID": "job-42"])
        #expect(result.output == "job-42")
        #expect(result.succeeded)
        let inherited = run(#"printf '%s|%s' "$PATH" "$HOME""#, environment: ["HOME": "/hook/home"])
        #expect(inherited.output == (StatePaths.environment("PATH") ?? "") + "|/hook/home")
        let lines = HookRunner.environment(overriddenBy: ["HOME": "/hook/home", "TRANSFERD_NEW": "1"])
        #expect(lines.filter { $0.hasPrefix("HOME=") } == ["HOME=/hook/home"])
        #expect(lines.last == "TRANSFERD_NEW=1")
    }

    @Test func capturesStdoutAndStderrTogether() {
        let result = run("echo out; echo err >&2; echo out again")
        #expect(result.output == "out\nerr\nout again\n")
        #expect(!result.truncated)
    }

    @Test func keepsTheFirst64KiBAndSaysWhenThereWasMore() {
        let long = run(#"head -c 100000 /dev/zero | tr '\0' x"#)
        #expect(long.succeeded)
        #expect(long.truncated)
        #expect(long.output.utf8.count == HookRunner.outputLimit)
        #expect(long.output.utf8.allSatisfy { $0 == UInt8(ascii: "x") })
        let exact = run(#"head -c 65536 /dev/zero | tr '\0' y"#)
        #expect(exact.output.utf8.count == 65536)
        #expect(!exact.truncated)
    }

    @Test func killsTheWholeGroupWhenTimeRunsOut() throws {
        let (result, elapsed) = seconds { run("sleep 30 & echo $!; sleep 30", timeout: 300) }
        #expect(elapsed < 5)
        #expect(result.timedOut)
        #expect(result.signal == 9)
        #expect(result.exitStatus == nil)
        #expect(!result.succeeded)
        #expect(result.summary.hasPrefix("timed out after "))
        #expect(result.durationMilliseconds >= 300)
        let background = try #require(Int32(result.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(waitUntilGone(background), "the background sleep survived the timeout")
        if isRunning(background) { kill(background, SIGKILL) }
    }

    @Test func aBackgroundProcessHoldingThePipeDoesNotHoldTheResult() throws {
        let (result, elapsed) = seconds { run("sleep 30 & echo $!; exit 0", timeout: 20_000) }
        #expect(elapsed < 5)
        #expect(result.exitStatus == 0)
        #expect(!result.timedOut)
        let background = try #require(Int32(result.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(isRunning(background), "the test needs the sleep still holding the pipe")
        kill(background, SIGKILL)
    }

    @Test func aMissingCommandExits127() {
        let result = run("transferd-no-such-command --flag")
        #expect(result.exitStatus == 127)
        #expect(result.output.contains("not found"))
        #expect(result.startError == nil)
        #expect(result.summary == "exit 127")
    }

    @Test func reportsTheSignalThatKilledTheHook() {
        let result = run("kill -TERM $$; sleep 5")
        #expect(result.signal == Int(SIGTERM))
        #expect(result.exitStatus == nil)
        #expect(!result.timedOut)
        #expect(!result.succeeded)
        #expect(result.summary == "killed by signal 15")
    }

    @Test func stdinIsEmpty() {
        let (result, elapsed) = seconds { run("cat; echo done", timeout: 3_000) }
        #expect(result.output == "done\n")
        #expect(!result.timedOut)
        #expect(elapsed < 3)
    }

    @Test func sigpipeIsDefaultInTheHookThoughTheDaemonIgnoresIt() {
        signal(SIGPIPE, SIG_IGN)
        // With SIGPIPE ignored, `yes` would see EPIPE and complain on stderr.
        let result = run("yes | head -c 1 >/dev/null; echo ok")
        #expect(result.output == "ok\n")
    }

    @Test func reapsTheShellAndClosesEveryDescriptor() throws {
        let shell = try #require(Int32(run("echo $$").output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(shell)"), "the shell was left a zombie")
        let before = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        for _ in 0..<100 { _ = run("true") }
        for _ in 0..<20 { _ = run("sleep 5", timeout: 1) }
        let after = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        #expect(after - before < 60, "\(after - before) more descriptors after 120 hooks")
    }

    @Test func refusesWhatCStringsCannotCarry() {
        let result = run("true", environment: ["A=B": "1"])
        #expect(result.startError == "invalid environment variable name 'A=B'")
        #expect(result.exitStatus == nil)
        #expect(!result.succeeded)
        #expect(result.summary == "could not start: invalid environment variable name 'A=B'")
        #expect(run("echo a\u{0}b").startError != nil)
    }

    @Test func reportsWhyTheShellCouldNotStart() {
        // One variable over MAX_ARG_STRLEN (128 KiB) makes execve fail with E2BIG.
        let result = run("true", environment: ["TRANSFERD_HUGE": String(repeating: "x", count: 200_000)])
        #expect(result.startError == "cannot run /bin/sh: \(SystemError.describe(E2BIG))")
        #expect(result.exitStatus == nil && result.signal == nil && !result.timedOut)
        #expect(result.summary == "could not start: cannot run /bin/sh: Argument list too long")
    }

    @Test func summariesAndJSON() throws {
        #expect(HookResult(signal: 9, timedOut: true, durationMilliseconds: 2003).summary == "timed out after 2 s")
        #expect(HookResult(signal: 9, timedOut: true, durationMilliseconds: 304).summary == "timed out after 0.3 s")
        #expect(HookResult(signal: 9).summary == "killed by signal 9")
        let result = HookResult(exitStatus: 0, output: "é\n", truncated: true, durationMilliseconds: 12)
        let decoded = try JSONDecoder().decode(HookResult.self, from: JSONEncoder().encode(result))
        #expect(decoded == result)
    }

    @Test func invalidUTF8IsReplaced() {
        let result = run(#"printf 'a\377b'"#)
        #expect(result.output == "a\u{FFFD}b")
    }
}

/// `--header-command`'s output, read as headers; what fails it says so without the output.
@Suite struct HeaderCommandTests {
    @Test func linesAreHeadersBlankLinesSkippedCRDropped() throws {
        let headers = try HeaderCommand.headers(fromOutput: "Authorization: Bearer x\r\n\nX-Trace-Id:42\n").get()
        #expect(headers == ["Authorization: Bearer x", "X-Trace-Id:42"])
        #expect(try HeaderCommand.headers(fromOutput: "").get() == [])
    }

    @Test func aLineThatIsNotAHeaderFailsByItsNumberOnly() {
        for (output, line) in [("Authorization Bearer secret\n", 1), ("A: b\nbad name: x\n", 2), ("A: b\nX: \u{1B}[31m\n", 2)] {
            guard case .failure(.auth(let why)) = HeaderCommand.headers(fromOutput: output) else {
                Issue.record("\(output.debugDescription) is refused")
                continue
            }
            #expect(why == "printed line \(line), which is not a 'Name: value' header")
            #expect(!why.contains("secret"))
        }
    }

    @Test func theCommandRunsWithTheJobInItsEnvironmentAndItsStderrDiscarded() throws {
        var job = makeJob(7)
        job.url = "http://h/x"
        let headers = try HeaderCommand.run("echo noise >&2; echo \"X-Job: $TRANSFERD_JOB_ID $TRANSFERD_ATTEMPT $TRANSFERD_URL\"",
                                            job: job, attempt: 3).get()
        #expect(headers == ["X-Job: 7 3 http://h/x"])
        guard case .failure(.auth(let why)) = HeaderCommand.run("exit 4", job: job, attempt: 1) else {
            Issue.record("a failing command fails")
            return
        }
        #expect(why == "exited with status 4")
    }
}
