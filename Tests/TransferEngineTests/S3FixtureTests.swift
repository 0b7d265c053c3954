import FoundationEssentials
import Testing
@testable import TransferEngine

/// The one S3 reader rule against each store's real answers, captured from the live servers
/// the integration tests run (Fixtures/S3/README.md): moto 5.2.6 and 5.2.1, rclone serve s3 and
/// SeaweedFS. What a document holds counts, not its root's spelling, and every ranged GET
/// answer is judged as the download would judge it.
@Suite struct S3FixtureTests {
    static let servers = ["moto-5.2.6", "moto-5.2.1", "rclone-1.75", "seaweedfs-4.48"]
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/S3")

    private func fixture(_ server: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.directory.appendingPathComponent(server).appendingPathComponent(name)))
    }

    /// A captured head (`HTTP/1.1 200 OK` and `Name: value` lines) as the download's parser reads it.
    private func head(_ server: String, _ name: String) throws -> ResponseHead {
        var parser = ResponseHeadParser()
        let text = String(decoding: try fixture(server, name), as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array((line.hasSuffix("\r") ? String(line.dropLast()) : String(line)).utf8) + [13, 10]
            if let parsed = bytes.withUnsafeBytes({ parser.consume($0) }) { return parsed }
        }
        return try #require(Array("\r\n".utf8).withUnsafeBytes { parser.consume($0) })
    }

    @Test(arguments: servers)
    func everyStoresCreationIsReadForItsUploadId(server: String) throws {
        for name in ["CreateMultipartUpload.xml", "CreateMultipartUpload-checksums.xml"] {
            let id = try S3XML.uploadId(try fixture(server, name))
            #expect(!id.isEmpty, "\(server)/\(name)")
        }
    }

    @Test(arguments: servers)
    func everyStoresPartListIsReadWithItsETags(server: String) throws {
        for name in ["ListParts.xml", "ListParts-checksums.xml"] {
            let page = try S3XML.partsPage(try fixture(server, name))
            #expect(!page.parts.isEmpty, "\(server)/\(name)")
            // Go's XML writes the quotes as `&#34;`: read back as the quotes UploadPart answered.
            #expect(page.parts.allSatisfy { $0.etag.hasPrefix("\"") && $0.etag.hasSuffix("\"") && $0.size > 0 }, "\(server)/\(name)")
            #expect(page.parts.map(\.number) == Array(1...page.parts.count), "\(server)/\(name)")
        }
    }

    @Test(arguments: servers)
    func everyStoresCompletionIsACompletionAndItsErrorAnError(server: String) throws {
        guard case .completed(let etag?) = try S3XML.completion(try fixture(server, "CompleteMultipartUpload.xml")) else {
            Issue.record("\(server): its completion was not read as one")
            return
        }
        #expect(etag.hasSuffix("-2\""), "\(server): \(etag)")
        let error = try S3XML.error(try fixture(server, "Error-NoSuchUpload.xml"))
        #expect(error.code == .noSuchUpload, "\(server)")
        #expect(throws: S3XMLError.errorDocument, "\(server)") { try S3XML.uploadId(try fixture(server, "Error-NoSuchUpload.xml")) }
        // SeaweedFS refuses a list where some parts name a checksum and others not.
        let mixed = try S3XML.completion(try fixture(server, "CompleteMultipartUpload-mixed.xml"))
        if server.hasPrefix("seaweedfs") {
            #expect(mixed == .failed(S3ErrorBody(code: S3ErrorCode("InvalidRequest"), message: "Invalid Request",
                                                requestId: "18EF1A84E8ED488C7778AAA2")))
        } else {
            guard case .completed = mixed else { Issue.record("\(server): \(mixed)"); return }
        }
    }

    /// rclone answers `Range: bytes=100-` with 200, the range's Content-Range and its length:
    /// taken for the whole entity it would complete a file short. The others answer 206.
    @Test(arguments: servers)
    func everyStoresRangedAnswerIsAppendedOrStartedOverNeverTakenForTheWhole(server: String) throws {
        let answer = try head(server, "GetObject-range.headers.txt")
        let range = try #require(answer.contentRange, "\(server): a Content-Range")
        let total = try #require(range.total)
        let resume = ResumeState(partialPath: "/tmp/p", bytesDurable: 100, validators: answer.validators, bytesTotal: total)
        let decision = DownloadDecision.decide(answer, offset: 100, resume: resume)
        switch (answer.status, decision) {
        case (206, .append(let appended)): #expect(appended == total, "\(server)")
        case (200, .startOver(let reason)): #expect(reason.contains("contradicts itself"), "\(server): \(reason)")
        default: Issue.record("\(server): HTTP \(answer.status) decided \(decision)")
        }
    }
}
