import Testing
@testable import TransferEngine

/// The control protocol's code and message for each typed refusal of a command: the texts the
/// CLI shows (and the golden tests pin) are the ones the scheduler's replies had before.
@Suite struct CommandRefusalTests {
    @Test func codesAndMessages() {
        let id = JobID(rawValue: 7)
        let cases: [(CommandRefusal, ControlError.Code, String)] = [
            (.unknownJob(id), .unknownJob, "no job 7"),
            (.unknownBatch(3), .unknownBatch, "no batch 3"),
            (.notAllowed(.resume, id, .running), .illegalTransition, "cannot resume job 7: it is running"),
            (.notLimitable(id, .completed), .illegalTransition, "cannot limit job 7: it is completed"),
            (.quarantined(id, reason: "bad row"), .illegalTransition, "cannot retry job 7: bad row"),
            (.notRecorded(.pause, id, "disk full"), .internal,
             "cannot record the pause of job 7: disk full (free space, then pause it again)"),
            (.notClaimed(id, "locked"), .internal, "cannot retry job 7: locked"),
            (.noResumeData(id, .queued), .illegalTransition, "job 7 has no resume data: it is queued"),
            (.refused(.invalid("bad URL")), .invalidArgument, "bad URL"),
            (.refused(.unknownBatch(3)), .unknownBatch, JobRefusal.unknownBatch(3).message),
        ]
        for (refusal, code, message) in cases {
            #expect(ControlError(refusal) == ControlError(code, message))
        }
    }

    @Test func storeFailuresSayWhatFailed() {
        #expect(ControlError(.store("disk I/O error"), doing: "cannot read jobs")
                == ControlError(.internal, "cannot read jobs: disk I/O error"))
        // Only store failures take the context; other refusals keep their own line.
        #expect(ControlError(.unknownJob(JobID(rawValue: 2)), doing: "cannot read job 2")
                == ControlError(.unknownJob, "no job 2"))
    }

    @Test func everyCommandHasItsWireWord() {
        for command in JobCommand.allCases {
            #expect(ControlCommand(rawValue: command.rawValue) != nil)
        }
    }
}
