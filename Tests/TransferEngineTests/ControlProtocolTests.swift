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
