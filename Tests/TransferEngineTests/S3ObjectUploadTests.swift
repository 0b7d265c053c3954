import Testing
@testable import TransferEngine

/// The S3 upload state machine alone: what it asks for, given the answers S3 gives.
@Suite struct S3ObjectUploadTests {
    let mib: Int64 = 1 << 20
    let location = try! S3Location(parsing: "s3://bucket/dir/a b.bin")
    let endpoint = try! S3Endpoint(url: "http://127.0.0.1:9000", region: "us-east-1")

    private func machine(size: Int64, session: UploadSession? = nil, parts: [UploadedPart] = []) throws -> S3ObjectUpload {
        try S3ObjectUpload(location: location, endpoint: endpoint, size: size, contentType: "application/octet-stream",
                           partSize: nil, session: session, parts: parts)
    }

    private func request(_ action: SessionAction) -> SessionRequest? {
        if case .send(let request) = action { return request }
        return nil
    }

    private func xml(_ text: String) -> [UInt8] { Array(text.utf8) }

    private static let noSuchUpload = "<Error><Code>NoSuchUpload</Code><Message>gone</Message></Error>"

    @Test func aSmallFileIsOneSignedPut() throws {
        var s3 = try machine(size: 3 * mib)
        let put = try #require(request(s3.start()))
        #expect(put.method == "PUT" && put.signed && put.body == .file(0..<(3 * mib)))
        #expect(put.url == "http://127.0.0.1:9000/bucket/dir/a%20b.bin")
        #expect(s3.answered(SessionResponse(status: 200)) == .complete)
        #expect(s3.serverBytes == 3 * mib)
    }

    @Test func aLargeFileIsCreatedRecordedSentInPartsAndCompleted() throws {
        var s3 = try machine(size: 20 * mib)
        let create = try #require(request(s3.start()))
        #expect(create.method == "POST" && create.url.hasSuffix("a%20b.bin?uploads="))
        #expect(create.headers.contains("x-amz-checksum-algorithm: CRC32"))
        let created = s3.answered(SessionResponse(status: 200, body: xml(
            "<InitiateMultipartUploadResult><Bucket>bucket</Bucket><Key>k</Key><UploadId>U1</UploadId></InitiateMultipartUploadResult>")))
        #expect(created == .record(.session(UploadSession(uploadID: "U1", partSize: 8 * mib))))
        var sent: [Range<Int64>] = []
        var action = s3.recorded()
        while case .send(let part) = action, part.method == "PUT" {
            guard case .file(let range) = part.body else { break }
            sent.append(range)
            #expect(part.url.contains("partNumber=\(sent.count)&uploadId=U1") && part.checksummed)
            // The driver adds the part's CRC32; S3 acknowledges it (or echoes it).
            var sentPart = part
            sentPart.checksum = "c\(sent.count)"
            let ack = s3.answered(SessionResponse(status: 200, fields: ["etag": "\"e\(sent.count)\""]), to: sentPart)
            #expect(ack == .record(.part(UploadedPart(number: sent.count, etag: "\"e\(sent.count)\"", size: range.count64,
                                                      checksum: "c\(sent.count)"), serverBytes: range.upperBound)))
            action = s3.recorded()
        }
        #expect(sent == [0..<(8 * mib), (8 * mib)..<(16 * mib), (16 * mib)..<(20 * mib)])
        let complete = try #require(request(action))
        #expect(complete.method == "POST" && complete.url.hasSuffix("?uploadId=U1"))
        guard case .bytes(let body) = complete.body else { Issue.record("no completion body"); return }
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("<PartNumber>1</PartNumber>") && text.contains("<PartNumber>3</PartNumber>"))
        #expect(text.contains("e1") && text.contains("e2") && text.contains("e3"))
        #expect(text.contains("<ChecksumCRC32>c3</ChecksumCRC32>"))
        // Complete may fail in a 200 answer's body.
        var failing = s3
        guard case .fail = failing.answered(SessionResponse(status: 200, body: xml("<Error><Code>InternalError</Code></Error>"))) else {
            Issue.record("a 200 with an Error body completed")
            return
        }
        #expect(s3.answered(SessionResponse(status: 200, body: xml(
            "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>"))) == .complete)
    }

    /// Parts in parallel: never more than `lanes` in flight, each acknowledged part recorded,
    /// Complete only once every part is acknowledged — whatever order the answers come in.
    @Test(arguments: [1, 2, 3, 7]) func partsInParallelAreEachRecordedAndCompletedOnce(lanes: Int) throws {
        var s3 = try S3ObjectUpload(location: location, endpoint: endpoint, size: 45 * mib, contentType: "x", partSize: nil,
                                    lanes: lanes, session: UploadSession(uploadID: "U", partSize: 8 * mib), parts: [])
        _ = s3.start()
        var action = s3.answered(SessionResponse(status: 200, body: xml("<ListPartsResult><IsTruncated>false</IsTruncated></ListPartsResult>")))
        #expect(action == .record(.parts([], serverBytes: 0)))
        action = s3.recorded()
        var inFlight: [SessionRequest] = []
        var recorded: [Int] = []
        var generator = SplitMix64(seed: UInt64(lanes))
        var completion: SessionRequest?
        for _ in 0..<100 {
            switch action {
            case .send(let request) where request.method == "PUT":
                inFlight.append(request)
                while let more = s3.more() { inFlight.append(more) }
                #expect(inFlight.count <= lanes)
            case .send(let request):
                completion = request
            case .record(.part(let part, _)):
                recorded.append(part.number)
                action = s3.recorded()
                continue
            case .idle:
                break
            default:
                Issue.record("unexpected \(action)")
            }
            guard completion == nil, !inFlight.isEmpty else { break }
            let answered = inFlight.remove(at: Int(generator.next() % UInt64(inFlight.count)))
            action = s3.answered(SessionResponse(status: 200, fields: ["etag": "\"\(answered.tag)\""]), to: answered)
        }
        #expect(recorded.sorted() == [1, 2, 3, 4, 5, 6])
        #expect(completion?.method == "POST" && inFlight.isEmpty)
        #expect(s3.serverBytes == 45 * mib)
    }

    @Test func aRecordedUploadContinuesFromWhatS3ListsNotFromTheLocalRecord() throws {
        // Recorded: part 1 only. S3 lists 1 and 2 (with their checksums), and a part 3 of the wrong size.
        var s3 = try machine(size: 20 * mib, session: UploadSession(uploadID: "U1", partSize: 8 * mib),
                             parts: [UploadedPart(number: 1, etag: "\"a\"", size: 8 * mib, checksum: "c1")])
        let list = try #require(request(s3.start()))
        #expect(list.method == "GET" && list.url.contains("uploadId=U1") && list.url.contains("max-parts=1000"))
        let listed = s3.answered(SessionResponse(status: 200, body: xml("""
            <ListPartsResponse><IsTruncated>false</IsTruncated>\
            <Part><PartNumber>1</PartNumber><ETag>"a"</ETag><ChecksumCRC32>c1</ChecksumCRC32><Size>8388608</Size></Part>\
            <Part><PartNumber>2</PartNumber><ETag>"b"</ETag><ChecksumCRC32>c2</ChecksumCRC32><Size>8388608</Size></Part>\
            <Part><PartNumber>3</PartNumber><ETag>"c"</ETag><Size>100</Size></Part></ListPartsResponse>
            """)))
        #expect(listed == .record(.parts([UploadedPart(number: 1, etag: "\"a\"", size: 8 * mib, checksum: "c1"),
                                          UploadedPart(number: 2, etag: "\"b\"", size: 8 * mib, checksum: "c2")],
                                         serverBytes: 16 * mib)))
        let next = try #require(request(s3.recorded()))
        #expect(next.body == .file((16 * mib)..<(20 * mib)) && next.url.contains("partNumber=3"))
    }

    @Test func partsListedWithoutChecksumsTakeTheRecordedOnesOrAreSentAgain() throws {
        // SeaweedFS lists no checksums. Part 1 was recorded with its CRC32; part 2 was
        // acknowledged but not recorded (a kill between the two); part 3 was recorded with
        // another ETag (sent again since). Complete must name every part the same way.
        var s3 = try machine(size: 20 * mib, session: UploadSession(uploadID: "U1", partSize: 8 * mib),
                             parts: [UploadedPart(number: 1, etag: "\"a\"", size: 8 * mib, checksum: "c1"),
                                     UploadedPart(number: 3, etag: "\"old\"", size: 4 * mib, checksum: "c3")])
        _ = s3.start()
        let listed = s3.answered(SessionResponse(status: 200, body: xml("""
            <ListPartsResult><IsTruncated>false</IsTruncated>\
            <Part><PartNumber>1</PartNumber><ETag>"a"</ETag><Size>8388608</Size></Part>\
            <Part><PartNumber>2</PartNumber><ETag>"b"</ETag><Size>8388608</Size></Part>\
            <Part><PartNumber>3</PartNumber><ETag>"new"</ETag><Size>4194304</Size></Part></ListPartsResult>
            """)))
        #expect(listed == .record(.parts([UploadedPart(number: 1, etag: "\"a\"", size: 8 * mib, checksum: "c1")],
                                         serverBytes: 8 * mib)))
        var action = s3.recorded()
        var resent: [Int] = []
        while case .send(let part) = action, part.method == "PUT" {
            resent.append(part.tag)
            var summed = part
            summed.checksum = "c\(part.tag)"
            _ = s3.answered(SessionResponse(status: 200, fields: ["etag": "\"e\(part.tag)\""]), to: summed)
            action = s3.recorded()
        }
        #expect(resent == [2, 3])
        guard case .send(let complete) = action, case .bytes(let body) = complete.body else {
            Issue.record("no completion: \(action)")
            return
        }
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.components(separatedBy: "<ChecksumCRC32>").count - 1 == 3)
        #expect(text.contains("<ETag>\"a\"</ETag><ChecksumCRC32>c1</ChecksumCRC32>"))
    }

    @Test func aPartListThatDoesNotMoveForwardEndsInAFailure() throws {
        var s3 = try machine(size: 100 * mib, session: UploadSession(uploadID: "U1", partSize: 8 * mib))
        _ = s3.start()
        let page = xml("<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>2</NextPartNumberMarker>"
            + "</ListPartsResult>")
        let second = try #require(request(s3.answered(SessionResponse(status: 200, body: page))))
        #expect(second.url.contains("part-number-marker=2"))
        guard case .fail(.protocolViolation(let why)) = s3.answered(SessionResponse(status: 200, body: page)) else {
            Issue.record("a repeated marker was followed")
            return
        }
        #expect(why.contains("does not move forward"))
    }

    @Test func aCreationAnswerWithoutAnUploadIdIsNotRetried() throws {
        var s3 = try machine(size: 20 * mib)
        _ = s3.start()
        guard case .fail(let error) = s3.answered(SessionResponse(status: 200, body: xml("<html>created</html>"))) else {
            Issue.record("an unreadable creation answer did not fail")
            return
        }
        #expect(error.code == "protocol" && !RetryPolicy().isRetryable(error))
        // rclone serve s3 names the root InitiateMultipartUpload: read, recorded.
        var rclone = try machine(size: 20 * mib)
        _ = rclone.start()
        #expect(rclone.answered(SessionResponse(status: 200, body: xml(
            "<InitiateMultipartUpload><UploadId>R1</UploadId></InitiateMultipartUpload>")))
            == .record(.session(UploadSession(uploadID: "R1", partSize: 8 * mib))))
    }

    @Test func aGoneUploadWhosePartsWereAllHeldIsLookedForAsAnObject() throws {
        // moto 5.2.1: Complete took effect, its answer was not understood; the next attempt's
        // ListParts finds no upload. The object tells whether it is there whole.
        var s3 = try machine(size: 10 * mib, session: UploadSession(uploadID: "U1", partSize: 8 * mib),
                             parts: [UploadedPart(number: 1, etag: "\"a\"", size: 8 * mib, checksum: "c1"),
                                     UploadedPart(number: 2, etag: "\"b\"", size: 2 * mib, checksum: "c2")])
        _ = s3.start()
        let head = try #require(request(s3.answered(SessionResponse(status: 404, body: xml(Self.noSuchUpload)))))
        #expect(head.method == "HEAD")
        #expect(s3.answered(SessionResponse(status: 200, fields: ["content-length": "\(10 * mib)", "etag": "\"x-2\""])) == .complete)
    }

    @Test func aVanishedUploadIsForgottenAndCreatedAnew() throws {
        var s3 = try machine(size: 20 * mib, session: UploadSession(uploadID: "U1", partSize: 8 * mib))
        _ = s3.start()
        #expect(s3.answered(SessionResponse(status: 404, body: xml(Self.noSuchUpload))) == .record(.session(nil)))
        #expect(s3.serverBytes == 0)
        #expect(request(s3.recorded())?.url.hasSuffix("?uploads=") == true)
    }

    @Test func aCompleteWhoseAnswerWasLostIsRecognisedByTheObject() throws {
        var s3 = try machine(size: 10 * mib, session: UploadSession(uploadID: "U1", partSize: 8 * mib),
                             parts: [UploadedPart(number: 1, etag: "\"a\"", size: 8 * mib, checksum: "c1"),
                                     UploadedPart(number: 2, etag: "\"b\"", size: 2 * mib, checksum: "c2")])
        _ = s3.start()
        _ = s3.answered(SessionResponse(status: 200, body: xml("""
            <ListPartsResult><IsTruncated>false</IsTruncated><Part><PartNumber>1</PartNumber><ETag>"a"</ETag><Size>8388608</Size></Part>\
            <Part><PartNumber>2</PartNumber><ETag>"b"</ETag><Size>2097152</Size></Part></ListPartsResult>
            """)))
        #expect(request(s3.recorded())?.method == "POST")
        let head = try #require(request(s3.answered(SessionResponse(status: 404, body: xml(Self.noSuchUpload)))))
        #expect(head.method == "HEAD" && head.url == "http://127.0.0.1:9000/bucket/dir/a%20b.bin")
        var whole = s3
        #expect(whole.answered(SessionResponse(status: 200, fields: ["content-length": "\(10 * mib)", "etag": "\"x-2\""])) == .complete)
        // Another object (another size, or not multipart) there: start again.
        #expect(s3.answered(SessionResponse(status: 200, fields: ["content-length": "5", "etag": "\"x\""])) == .record(.session(nil)))
    }

    @Test func refusedCredentialsFailAsAuthAndAbortIsADelete() throws {
        var s3 = try machine(size: 3 * mib)
        _ = s3.start()
        guard case .fail(let error) = s3.answered(SessionResponse(status: 403, body: xml(
            "<Error><Code>SignatureDoesNotMatch</Code><Message>no</Message></Error>"))) else {
            Issue.record("a 403 did not fail the attempt")
            return
        }
        #expect(error.code == "auth")
        let abort = S3ObjectUpload.abort(UploadSession(uploadID: "U 1"), location: location, endpoint: endpoint)
        #expect(abort?.method == "DELETE" && abort?.signed == true && abort?.url.hasSuffix("?uploadId=U%201") == true)
        #expect(S3ObjectUpload.abort(UploadSession(), location: location, endpoint: endpoint) == nil)
    }
}
