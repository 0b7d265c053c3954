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

    /// A new upload's first step: OPTIONS, answered with what the server offers; then its creation.
    private func created(_ tus: inout TusUpload, offers fields: [String: String] = ["tus-extension": "creation,termination"])
        -> SessionAction {
        _ = tus.start()
        return tus.answered(answer(204, fields))
    }

    @Test func createsRecordsThenPatchesInChunksUntilTheServerHoldsEveryByte() throws {
        var tus = machine(size: 5 * mib / 2, chunk: mib)
        let options = try #require(request(tus.start()))
        #expect(options.method == "OPTIONS" && options.url == endpoint && options.headers == ["Tus-Resumable: 1.0.0"])
        let create = try #require(request(tus.answered(answer(204, ["tus-extension": "creation,termination", "tus-version": "1.0.0"]))))
        #expect(create.method == "POST" && create.url == endpoint && create.bodyLength == 0)
        #expect(create.headers.contains("Upload-Length: \(5 * mib / 2)"))
        #expect(create.headers.contains("Upload-Metadata: filename YSBiLnR4dA==,filetype dGV4dC9wbGFpbg=="))
        #expect(create.headers.contains("Tus-Resumable: 1.0.0"))
        // The URL is recorded before any byte is sent.
        #expect(tus.answered(answer(201, ["location": "/files/abc"]))
                == .record(.session(UploadSession(url: "http://127.0.0.1:1080/files/abc", terminates: true))))
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
        _ = created(&elsewhere)
        guard case .fail(let error) = elsewhere.answered(answer(201, ["location": "http://other.example/files/x"])) else {
            Issue.record("an upload at another origin")
            return
        }
        #expect(error.message.contains("another origin"))
        var refused = machine(size: 100)
        _ = created(&refused)
        #expect(refused.answered(answer(413)) == .fail(.httpStatus(413)))
    }

    @Test func anOffsetPastWhatThePatchSentOrOneThatDoesNotMoveIsNotBelieved() throws {
        var beyond = machine(size: 2_000_000, chunk: 1_000_000, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        _ = beyond.start()
        _ = beyond.answered(answer(200, ["upload-offset": "0"]))
        guard case .fail(.protocolViolation(let why)) = beyond.answered(answer(204, ["upload-offset": "1001000"])) else {
            Issue.record("an offset past the PATCH's end was believed"); return
        }
        #expect(why.contains("ended at byte 1000000"))
        // A server that takes nothing of each PATCH gets it a few times, then the attempt fails.
        var stuck = machine(size: 2_000_000, chunk: 1_000_000, session: UploadSession(url: "http://127.0.0.1:1080/files/abc"))
        var action = stuck.start()
        var patches = 0
        for _ in 0..<20 {
            guard case .send(let request) = action else { break }
            if request.method == "PATCH" { patches += 1 }
            action = stuck.answered(answer(request.method == "HEAD" ? 200 : 204, ["upload-offset": "0"]))
        }
        guard case .fail(.protocolViolation) = action else { Issue.record("expected a failure, got \(action)"); return }
        #expect(patches == TusUpload.maxDetours + 1)
    }

    @Test func aChunkTooLargeForTheServerIsHalvedAndKeptWithTheUpload() throws {
        var tus = machine(size: 50 * mib)
        _ = created(&tus)
        _ = tus.answered(answer(201, ["location": "/files/abc"]))
        let first = try #require(request(tus.recorded()))
        #expect(first.body == .file(0..<(32 * mib)))
        // tussi takes at most 10 MB a PATCH.
        #expect(tus.answered(answer(413)) == .record(.session(UploadSession(url: "http://127.0.0.1:1080/files/abc",
                                                                               chunkSize: 16 * mib, terminates: true))))
        let second = try #require(request(tus.recorded()))
        #expect(second.body == .file(0..<(16 * mib)))
        #expect(tus.answered(answer(413)) == .record(.session(UploadSession(url: "http://127.0.0.1:1080/files/abc",
                                                                               chunkSize: 8 * mib, terminates: true))))
        let third = try #require(request(tus.recorded()))
        #expect(third.body == .file(0..<(8 * mib)) && third.headers.contains("Upload-Offset: 0"))
        // The next attempt (after a kill, say) sends the size the server took.
        var next = machine(size: 50 * mib, session: UploadSession(url: "http://127.0.0.1:1080/files/abc", chunkSize: 8 * mib))
        _ = next.start()
        #expect(request(next.answered(answer(200, ["upload-offset": "\(8 * mib)"])))?.body == .file((8 * mib)..<(16 * mib)))
        // At the smallest chunk a 413 is the end.
        var tiny = machine(size: 1 * mib, chunk: RemoteOptions.minimumChunk, session: UploadSession(url: "http://h/files/t"))
        _ = tiny.start()
        _ = tiny.answered(answer(200, ["upload-offset": "0"]))
        guard case .fail(let error) = tiny.answered(answer(413)) else { Issue.record("a 413 at the floor did not fail"); return }
        #expect(error.code == "too_large" && !RetryPolicy().isRetryable(error))
    }

    @Test func whatTheServersOptionsSayItIsHeldTo() throws {
        // No termination offered: recorded, so a cancel sends no DELETE.
        var plain = machine(size: 100)
        _ = created(&plain, offers: ["tus-extension": "creation"])
        #expect(plain.answered(answer(201, ["location": "/files/p"]))
                == .record(.session(UploadSession(url: "http://127.0.0.1:1080/files/p", terminates: false))))
        #expect(TusUpload.discard(UploadSession(url: "http://127.0.0.1:1080/files/p", terminates: false)) == nil)
        // Tus-Max-Size below the file: refused before a byte is sent.
        var big = machine(size: 100)
        guard case .fail(let error) = created(&big, offers: ["tus-max-size": "99"]) else { Issue.record("Tus-Max-Size ignored"); return }
        #expect(error.code == "too_large" && error.message.contains("at most 99 bytes"))
        // A server that does not answer OPTIONS is not held to anything.
        var silent = machine(size: 100)
        _ = silent.start()
        #expect(request(silent.answered(answer(405)))?.method == "POST")
    }

    @Test func anEmptyFileIsCompleteOnceCreated() {
        var tus = machine(size: 0)
        _ = created(&tus)
        _ = tus.answered(answer(201, ["location": "http://127.0.0.1:1080/files/e"]))
        #expect(tus.recorded() == .complete)
    }

    @Test func discardingIsADeleteOfTheRecordedUpload() {
        let request = TusUpload.discard(UploadSession(url: "http://h/files/x"))
        #expect(request?.method == "DELETE" && request?.url == "http://h/files/x" && request?.headers == ["Tus-Resumable: 1.0.0"])
        #expect(TusUpload.discard(UploadSession()) == nil)
        #expect(SessionDiscarder.refusesForGood(405) && SessionDiscarder.refusesForGood(501) && SessionDiscarder.refusesForGood(400))
        #expect(!SessionDiscarder.refusesForGood(503) && !SessionDiscarder.refusesForGood(429) && !SessionDiscarder.refusesForGood(408))
        #expect(!SessionDiscarder.refusesForGood(403) && !SessionDiscarder.refusesForGood(401), "credentials may be mended")
    }
}

extension SessionMachine {
    /// The answer to the one request in flight (every request but an S3 part's).
    mutating func answered(_ response: SessionResponse) -> SessionAction {
        answered(response, to: SessionRequest(method: "", url: ""))
    }
}
