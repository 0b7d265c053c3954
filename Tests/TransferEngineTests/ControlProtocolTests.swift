import Foundation
import Testing
@testable import TransferEngine

@Suite struct ControlProtocolTests {
    @Test func requestsRoundTrip() throws {
        let request = ControlRequest(.add, job: NewJob(kind: .download, url: "http://h/f", path: "/tmp/f", sha256: nil))
        let decoded = try JSONDecoder().decode(ControlRequest.self, from: JSONEncoder().encode(request))
        #expect(decoded == request)
        let wire = #"{"version":1,"command":"resume-data","ids":[4]}"#
        #expect(try JSONDecoder().decode(ControlRequest.self, from: Data(wire.utf8)).command == .resumeData)
    }

    /// `backup-plan` and its answer, in the words docs/control-protocol.md gives.
    @Test func aBackupPlanRoundTrips() throws {
        let wire = #"{"version":1,"ok":true,"plan":["new","changed-size","changed-mtime","changed-sha256","no-sha256","incomplete","unchanged","queued","gone"]}"#
        let response = try JSONDecoder().decode(ControlResponse.self, from: Data(wire.utf8))
        #expect(response.plan == BackupDecision.allCases)
        let encoded = try JSONStreamEncoder().encode(ControlResponse(plan: [.new, .gone]))
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""plan":["new","gone"]"#))
        let request = #"{"version":1,"command":"backup-plan","submission":{"token":"","final":true,"reuse":false,"checksum":false,"entries":[]}}"#
        #expect(try JSONDecoder().decode(ControlRequest.self, from: Data(request.utf8)).command == .backupPlan)
    }

    /// `prune` and its answer, in the words docs/control-protocol.md gives; its numbers checked.
    @Test func aPruneRoundTrips() throws {
        let wire = #"{"version":1,"id":4,"command":"prune","states":["failed","cancelled"],"olderThan":604800,"batch":3}"#
        let request = try JSONDecoder().decode(ControlRequest.self, from: Data(wire.utf8))
        #expect(request.command == .prune && request.states == [.failed, .cancelled] && request.olderThan == 604_800)
        #expect(request.batch == 3)
        var response = ControlResponse()
        response.pruned = 1234
        #expect(String(decoding: try JSONStreamEncoder().encode(response), as: UTF8.self) == #"{"version":1,"ok":true,"pruned":1234}"#)
        var tooOld = ControlRequest(.prune)
        tooOld.olderThan = 3_153_600_001
        #expect(throws: OutOfRange(field: "olderThan", value: "3153600001", limit: "from 0 to 3153600000 seconds")) {
            try tooOld.checkNumbers()
        }
        tooOld.olderThan = -1
        #expect(throws: OutOfRange.self) { try tooOld.checkNumbers() }
        let unknownWord = #"{"version":1,"command":"prune","states":["done"]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ControlRequest.self, from: Data(unknownWord.utf8)) }
    }

    /// `wait` with `brief` and `ranges`: the completed jobs as the fewest id ranges, on the wire
    /// `[first, last]`, read back by the daemon's own decoder and by Foundation's; `transferctl`
    /// gets every job's outcome back from them.
    @Test func completedJobsTravelAsIDRanges() throws {
        let ids = [9, 3, 4, 5, 12, 10, 4, 1].map { JobID(rawValue: $0) }
        let ranges = JobIDRange.covering(ids)
        #expect(ranges.map { [$0.first.rawValue, $0.last.rawValue] } == [[1, 1], [3, 5], [9, 10], [12, 12]])
        #expect(ranges.flatMap(\.ids) == Array(Set(ids)).sorted())
        #expect(JobIDRange.covering([]).isEmpty)
        let top = JobID(rawValue: .max)
        #expect(JobIDRange.covering([top, JobID(rawValue: .max - 1)]) == [JobIDRange(first: JobID(rawValue: .max - 1), last: top)])

        var response = ControlResponse()
        response.completed = ranges
        response.outcomes = []
        let wire = try JSONStreamEncoder().encode(response)
        #expect(String(decoding: wire, as: UTF8.self) == #"{"version":1,"ok":true,"outcomes":[],"completed":[[1,1],[3,5],[9,10],[12,12]]}"#)
        #expect(try JSONTreeDecoder().decode(ControlResponse.self, from: wire) == response)
        #expect(try JSONDecoder().decode(ControlResponse.self, from: Data(wire)) == response)
        #expect(JobOutcome.all(in: response)?.map(\.id.rawValue) == [1, 3, 4, 5, 9, 10, 12])
        #expect(JobOutcome.all(in: response)?.allSatisfy { $0.state == .completed && $0.error == nil } == true)
        #expect(JobOutcome.all(in: ControlResponse()) == nil)
        for bad in [#"{"version":1,"ok":true,"completed":[[1]]}"#, #"{"version":1,"ok":true,"completed":[[1,2,3]]}"#] {
            #expect(throws: DecodingError.self) { try JSONTreeDecoder().decode(ControlResponse.self, from: Array(bad.utf8)) }
        }
        let request = #"{"version":1,"command":"wait","batch":3,"brief":true,"ranges":true}"#
        #expect(try JSONTreeDecoder().decode(ControlRequest.self, from: Array(request.utf8)).ranges == true)
    }

    @Test func validationRefusesBadJobsWithOneLine() {
        func refusal(_ job: NewJob) -> ControlError? {
            do { try JobValidation.validate(job); return nil } catch { return ControlError(error) }
        }
        let good = NewJob(kind: .download, url: "https://example.com/f", path: "/tmp/transferd-validation-\(UUID())")
        #expect(refusal(good) == nil)
        for url in ["notaurl", "ftp://h/f", "http://", "file:///etc/passwd", ""] {
            var job = good
            job.url = url
            #expect(refusal(job)?.code == .invalidArgument, "\(url)")
        }
        var relative = good
        relative.path = "out.bin"
        #expect(refusal(relative)?.code == .invalidArgument)
        var badHash = good
        badHash.sha256 = "xyz"
        #expect(refusal(badHash)?.code == .invalidArgument)
        var existing = good
        existing.path = "/etc/hostname"
        #expect(refusal(existing)?.message.contains("--overwrite") == true)
        var injected = good
        injected.headers = ["X: a\r\nEvil: b"]
        #expect(refusal(injected)?.code == .invalidArgument)
        for message in [refusal(badHash), refusal(relative)].compactMap({ $0?.message }) {
            #expect(!message.contains("\n"))
        }
    }
}
