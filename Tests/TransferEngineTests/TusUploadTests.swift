import Testing
@testable import TransferEngine

/// The tus state machine alone: what it asks for, given the answers a server gives.
@Suite struct TusUploadTests {
    let endpoint = "http://127.0.0.1:1080/files/"
    let mib: Int64 = 1 << 20

    private func machine(size: Int64, chunk: Int64? = nil, session: UploadSession? = nil) -> TusUpload {
        TusUpload(creationURL: endpoint, size: size, filename: "a b.txt", filetype: "text/plain", chunk: chunk, session: session)
    }

    private func request(_ action: SessionAction) -> SessionRequest? {
        if case .send(let request) = action { return request }
        return nil
    }

    private func answer(_ status: Int, _ fields: [String: String] = [:]) -> SessionResponse {
        SessionResponse(status: status, fields: fields)
    }

    @Test func createsRecordsThenPatchesInChunksUntilTheServerHoldsEveryByte() throws {
        var tus = machine(size: 5 * mib / 2, chunk: mib)
        let create = try #require(request(tus.start()))
        #expect(create.method == "POST" && create.url == endpoint && create.bodyLength == 0)
        #expect(create.headers.contains("Upload-Length: \(5 * mib / 2)"))
        #expect(create.headers.contains("Upload-Metadata: filename YSBiLnR4dA==,filetype dGV4dC9wbGFpbg=="))
        #expect(create.headers.contains("Tus-Resumable: 1.0.0"))
        // The URL is recorded before any byte is sent.
        #expect(tus.answered(answer(201, ["location": "/files/abc"])) == .record(.session(UploadSession(url: "http://127.0.0.1:1080/files/abc"))))
        let first = try #require(request(tus.recorded()))
        #expect(first.method == "PATCH" && first.url == "http://127.0.0.1:1080/files/abc")
        #expect(first.body == .file(0..<mib) && first.headers.contains("Upload-Offset: 0"))
        #expect(first.headers.contains("Content-Type: application/offset+octet-stream"))
        // The server kept part of the chunk: the next one starts where it says.
        #expect(tus.answered(answer(204, ["upload-offset": "\(mib - 10)"])) == .record(.offset(mib - 10)))
        #expect(tus.serverBytes == mib - 10)
        let second = try #require(request(tus.recorded()))
        #expect(second.body == .file((mib - 10)..<(2 * mib - 10)))
        #expect(tus.answered(answer(204, ["upload-offset": "\(2 * mib - 10)"])) == .record(.offset(2 * mib - 10)))
        let last = try #require(request(tus.recorded()))
        #expect(last.body == .file((2 * mib - 10)..<(5 * mib / 2)))
        #expect(tus.answered(answer(204, ["upload-offset": "\(5 * mib / 2)"])) == .record(.offset(5 * mib / 2)))
        #expect(tus.recorded() == .complete)
    }

    @Test func aRecordedUploadContinuesFromTheOffsetTheServerReports() throws {
        var tus = machine(size: 10 * mib, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        let head = try #require(request(tus.start()))
        #expect(head.method == "HEAD" && head.url == "http://127.0.0.1:1080/files/abc" && head.body == .none)
        let patch = try #require(request(tus.answered(answer(200, ["upload-offset": "4096", "upload-length": "\(10 * mib)"]))))
        #expect(patch.body == .file(4096..<(10 * mib)))
        #expect(patch.headers.contains("Upload-Offset: 4096"))
    }

    @Test func aConflictAsksAgainAndAVanishedUploadIsForgottenThenCreatedAnew() throws {
        var tus = machine(size: 100, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        _ = tus.start()
        _ = tus.answered(answer(200, ["upload-offset": "10"]))
        #expect(request(tus.answered(answer(409)))?.method == "HEAD")
        #expect(tus.answered(answer(410)) == .record(.session(nil)))
        #expect(tus.serverBytes == 0)
        #expect(request(tus.recorded())?.method == "POST")
    }

    @Test func offsetsThatKeepDisagreeingFailTheAttemptInsteadOfLooping() {
        var tus = machine(size: 100, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        var action = tus.start()
        for _ in 0..<10 {
            guard case .send(let request) = action else { break }
            action = tus.answered(request.method == "HEAD" ? answer(200, ["upload-offset": "0"]) : answer(409))
        }
        guard case .fail(let error) = action else { Issue.record("expected a failure, got \(action)"); return }
        #expect(error.code == "protocol")
    }

    @Test func answersOutsideTheProtocolFailWithoutTrustingThem() {
        var missing = machine(size: 100, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        _ = missing.start()
        #expect(missing.answered(answer(200)) == .fail(.protocolViolation("the tus server's HEAD answer has no valid Upload-Offset")))
        var beyond = machine(size: 100, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        _ = beyond.start()
        guard case .fail = beyond.answered(answer(200, ["upload-offset": "101"])) else { Issue.record("an offset past the size"); return }
        var elsewhere = machine(size: 100)
        _ = elsewhere.start()
        guard case .fail(let error) = elsewhere.answered(answer(201, ["location": "http://other.example/files/x"])) else {
            Issue.record("an upload at another origin")
            return
        }
        #expect(error.message.contains("another origin"))
        var refused = machine(size: 100)
        _ = refused.start()
        #expect(refused.answered(answer(413)) == .fail(.httpStatus(413)))
    }

    @Test func anEmptyFileIsCompleteOnceCreated() {
        var tus = machine(size: 0)
        _ = tus.start()
        _ = tus.answered(answer(201, ["location": "http://127.0.0.1:1080/files/e"]))
        #expect(tus.recorded() == .complete)
    }

    @Test func discardingIsADeleteOfTheRecordedUpload() {
        let request = TusUpload.discard(UploadSession(url: "http://h/files/x"))
        #expect(request?.method == "DELETE" && request?.url == "http://h/files/x" && request?.headers == ["Tus-Resumable: 1.0.0"])
        #expect(TusUpload.discard(UploadSession()) == nil)
    }
}

extension SessionMachine {
    /// The answer to the one request in flight (every request but an S3 part's).
    mutating func answered(_ response: SessionResponse) -> SessionAction {
        answered(response, to: SessionRequest(method: "", url: ""))
    }
}
