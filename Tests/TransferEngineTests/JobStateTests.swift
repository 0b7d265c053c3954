import Testing
@testable import TransferEngine

@Suite struct JobStateTests {
    /// SPEC.md's table, written out independently of the implementation.
    static let legal: Set<String> = [
        "queued>running", "queued>paused", "queued>cancelled",
        "running>completed", "running>failed", "running>waiting", "running>paused", "running>cancelled", "running>queued",
        "waiting>queued", "waiting>running", "waiting>paused", "waiting>cancelled",
        "paused>queued", "paused>cancelled",
        "failed>queued", "failed>cancelled",
    ]

    @Test func everyPairFollowsTheSpecTable() {
        for from in JobState.allCases {
            for to in JobState.allCases {
                let key = "\(from.rawValue)>\(to.rawValue)"
                #expect(from.canTransition(to: to) == Self.legal.contains(key), "\(key)")
            }
        }
    }

    @Test func finalStatesNeverChange() {
        for to in JobState.allCases {
            #expect(!JobState.completed.canTransition(to: to))
            #expect(!JobState.cancelled.canTransition(to: to))
        }
    }

    @Test func commandTargets() {
        #expect(JobCommand.pause.target(from: .running) == .paused)
        #expect(JobCommand.pause.target(from: .completed) == nil)
        #expect(JobCommand.pause.target(from: .paused) == nil)
        #expect(JobCommand.resume.target(from: .paused) == .queued)
        #expect(JobCommand.resume.target(from: .running) == nil)
        #expect(JobCommand.resume.target(from: .cancelled) == nil)
        #expect(JobCommand.cancel.target(from: .failed) == .cancelled)
        #expect(JobCommand.cancel.target(from: .completed) == nil)
        #expect(JobCommand.retry.target(from: .failed) == .queued)
        #expect(JobCommand.retry.target(from: .completed) == nil)
    }

    @Test func rawValuesAreTheContract() {
        #expect(JobState.allCases.map(\.rawValue) == ["queued", "running", "paused", "waiting", "completed", "failed", "cancelled"])
        #expect(ExitStatus.unreachable.rawValue == 3)
        #expect(ExitStatus.timeout.rawValue == 124)
    }
}
