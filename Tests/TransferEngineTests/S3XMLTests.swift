import Testing
@testable import TransferEngine

@Suite struct S3XMLTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // AWS's documented examples (CreateMultipartUpload, ListParts, ListMultipartUploads, Error).
    static let initiate = """
        <?xml version="1.0" encoding="UTF-8"?>
        <InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Bucket>example-bucket</Bucket>
          <Key>example-object</Key>
          <UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>
        </InitiateMultipartUploadResult>
        """

    static let listParts = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Bucket>example-bucket</Bucket>
          <Key>example-object</Key>
          <UploadId>XXBsb2FkIElEIGZvciBlbHZpbmcncyVcdS1tb3ZpZS5tMnRzEEEwbG9hZA</UploadId>
          <Initiator>
              <ID>arn:aws:iam::111122223333:user/some-user-11116a31-17b5-4fb7-9df5-b288870f11xx</ID>
              <DisplayName>umat-user-11116a31-17b5-4fb7-9df5-b288870f11xx</DisplayName>
          </Initiator>
          <Owner>
            <ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID>
            <DisplayName>someName</DisplayName>
          </Owner>
          <StorageClass>STANDARD</StorageClass>
          <PartNumberMarker>1</PartNumberMarker>
          <NextPartNumberMarker>3</NextPartNumberMarker>
          <MaxParts>2</MaxParts>
          <IsTruncated>true</IsTruncated>
          <Part>
            <PartNumber>2</PartNumber>
            <LastModified>2010-11-10T20:48:34.000Z</LastModified>
            <ETag>"7778aef83f66abc1fa1e8477f296d394"</ETag>
            <Size>10485760</Size>
          </Part>
          <Part>
            <PartNumber>3</PartNumber>
            <LastModified>2010-11-10T20:48:33.000Z</LastModified>
            <ETag>&quot;aaaa18db4cc2f85cedef654fccc4a4x8&quot;</ETag>
            <Size>10485760</Size>
          </Part>
        </ListPartsResult>
        """

    static let noSuchUpload = """
        <?xml version="1.0" encoding="UTF-8"?>
        <Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist. The upload ID may be invalid, \
        or the upload may have been aborted or completed.</Message><UploadId>VXBsb2FkIElE</UploadId>\
        <RequestId>4442587FB7D0A2F9</RequestId><HostId>host</HostId></Error>
        """

    @Test func theUploadIdOfANewUpload() throws {
        #expect(try S3XML.uploadId(Self.bytes(Self.initiate)) == "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA")
        #expect(throws: S3XMLError.missingField("UploadId", in: "InitiateMultipartUploadResult")) {
            try S3XML.uploadId(Self.bytes("<InitiateMultipartUploadResult><UploadId/></InitiateMultipartUploadResult>"))
        }
        #expect(throws: S3XMLError.errorDocument) { try S3XML.uploadId(Self.bytes(Self.noSuchUpload)) }
        // rclone serve s3 names the root `InitiateMultipartUpload`: what it holds is what counts.
        #expect(try S3XML.uploadId(Self.bytes("<InitiateMultipartUpload><Bucket>b</Bucket><Key>k</Key><UploadId>u1</UploadId>"
            + "</InitiateMultipartUpload>")) == "u1")
        #expect(throws: S3XMLError.missingField("UploadId", in: "html")) {
            try S3XML.uploadId(Self.bytes("<html><body><p>UploadId</p></body></html>"))
        }
        #expect(throws: S3XMLError.invalidValue("a\nb", field: "UploadId")) {
            try S3XML.uploadId(Self.bytes("<InitiateMultipartUploadResult><UploadId>a&#10;b</UploadId></InitiateMultipartUploadResult>"))
        }
    }

    @Test func partsWithTheirETagsAndTheNextPage() throws {
        let page = try S3XML.partsPage(Self.bytes(Self.listParts))
        #expect(page.parts == [S3Part(number: 2, etag: "\"7778aef83f66abc1fa1e8477f296d394\"", size: 10_485_760),
                               S3Part(number: 3, etag: "\"aaaa18db4cc2f85cedef654fccc4a4x8\"", size: 10_485_760)])
        #expect(page.isTruncated)
        #expect(page.nextPartNumberMarker == 3)
        let last = try S3XML.partsPage(Self.bytes("<ns:ListPartsResult xmlns:ns='x'><ns:IsTruncated> false </ns:IsTruncated>"
            + "<ns:Part><ns:PartNumber>1</ns:PartNumber><ns:ETag>e</ns:ETag><ns:Size>0</ns:Size></ns:Part></ns:ListPartsResult>"))
        #expect(last == S3PartsPage(parts: [S3Part(number: 1, etag: "e", size: 0)], isTruncated: false, nextPartNumberMarker: nil))
        #expect(try S3XML.partsPage(Self.bytes("<ListPartsResult/>")).parts.isEmpty)
    }

    @Test(arguments: [
        ("<ListPartsResult><Part><ETag>e</ETag><Size>1</Size></Part></ListPartsResult>", S3XMLError.missingField("PartNumber", in: "Part")),
        ("<ListPartsResult><Part><PartNumber>1</PartNumber><Size>1</Size></Part></ListPartsResult>", .missingField("ETag", in: "Part")),
        ("<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e</ETag></Part></ListPartsResult>", .missingField("Size", in: "Part")),
        ("<ListPartsResult><Part><PartNumber>99999999999999999999999</PartNumber></Part></ListPartsResult>",
         .invalidNumber("99999999999999999999999", field: "PartNumber")),
        ("<ListPartsResult><Part><PartNumber>10001</PartNumber></Part></ListPartsResult>", .invalidNumber("10001", field: "PartNumber")),
        ("<ListPartsResult><Part><PartNumber>0</PartNumber></Part></ListPartsResult>", .invalidNumber("0", field: "PartNumber")),
        ("<ListPartsResult><Part><PartNumber>-1</PartNumber></Part></ListPartsResult>", .invalidNumber("-1", field: "PartNumber")),
        ("<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e</ETag><Size>9223372036854775808</Size></Part></ListPartsResult>",
         .invalidNumber("9223372036854775808", field: "Size")),
        ("<ListPartsResult><IsTruncated>yes</IsTruncated></ListPartsResult>", .invalidValue("yes", field: "IsTruncated")),
        ("<ListPartsResult><IsTruncated>true</IsTruncated></ListPartsResult>", .missingField("NextPartNumberMarker", in: "ListPartsResult")),
    ])
    func partsThatCannotBeTrustedAreRefused(xml: String, error: S3XMLError) {
        #expect(throws: error) { try S3XML.partsPage(Self.bytes(xml)) }
    }

    @Test func errorsAndCompletions() throws {
        let error = try S3XML.error(Self.bytes(Self.noSuchUpload))
        #expect(error.code == .noSuchUpload)
        #expect(error.message?.hasPrefix("The specified upload does not exist.") == true)
        #expect(error.requestId == "4442587FB7D0A2F9")
        #expect(throws: S3XMLError.missingField("Code", in: "Error")) { try S3XML.error(Self.bytes("<Error><Message>m</Message></Error>")) }
        let done = """
            <?xml version="1.0" encoding="UTF-8"?>
            <CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Location>http://Example-Bucket.s3.region.amazonaws.com/Example-Object</Location>
              <Bucket>Example-Bucket</Bucket><Key>Example-Object</Key>
              <ETag>"3858f62230ac3c915f300c664312c11f-9"</ETag>
            </CompleteMultipartUploadResult>
            """
        #expect(try S3XML.completion(Self.bytes(done)) == .completed(etag: "\"3858f62230ac3c915f300c664312c11f-9\""))
        let failedWith200 = "<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>"
        #expect(try S3XML.completion(Self.bytes(failedWith200))
                == .failed(S3ErrorBody(code: .internalError, message: "We encountered an internal error.")))
        #expect(throws: S3XMLError.missingField("ETag", in: "html")) {
            try S3XML.completion(Self.bytes("<html><body>502 Bad Gateway</body></html>"))
        }
        // moto 5.2.1 names the root `CompleteMultipartUploadResponse`.
        #expect(try S3XML.completion(Self.bytes("<CompleteMultipartUploadResponse xmlns='x'><ETag>\"e-2\"</ETag>"
            + "</CompleteMultipartUploadResponse>")) == .completed(etag: "\"e-2\""))
    }

    @Test(arguments: [
        ("", S3XMLError.Malformation.unexpectedEnd), ("   ", .unexpectedEnd), ("<Error>", .unexpectedEnd),
        ("<Error><Code>x</Error>", .mismatchedEndTag), ("<Error><Code>x</Code", .unterminatedTag), ("<Error", .unterminatedTag),
        ("<Error a=\"1></Error>", .unterminatedTag), ("<Error a=1></Error>", .badAttribute), ("hello", .textOutsideRoot),
        ("<Error/>trailing", .textOutsideRoot), ("<Error/><Error/>", .secondRoot), ("<!-- x", .unterminatedComment),
        ("<?xml version='1.0'", .unterminatedDeclaration), ("<Error><![CDATA[x</Error>", .unterminatedCDATA),
        ("<!DOCTYPE x [<!ENTITY a \"aaaa\">]><Error>&a;</Error>", .declaration), ("<Error>&unknown;</Error>", .badEntity),
        ("<Error>&amp</Error>", .badEntity), ("<Error>&#0;</Error>", .badEntity), ("<Error>&#xD800;</Error>", .badEntity),
        ("<Error>&#x110000;</Error>", .badEntity), ("<Error>&#99999999999999999999;</Error>", .badEntity),
        ("<Error>&#x;</Error>", .badEntity), ("<Error>&#-1;</Error>", .badEntity), ("<>", .badName), ("</>", .badName),
        ("<a:>x</a:>", .badName), ("<Error>" + String(repeating: "<a>", count: 40), .tooDeep), ("</Error>", .mismatchedEndTag),
    ])
    func malformedDocumentsAreRefusedNeverTrapped(xml: String, problem: S3XMLError.Malformation) {
        do {
            _ = try S3XML.error(Self.bytes(xml))
            Issue.record("accepted: \(xml)")
        } catch {
            guard case .malformed(let found, _) = error else {
                Issue.record("\(xml): \(error)")
                return
            }
            #expect(found == problem, "\(xml)")
            #expect(error.message.hasPrefix("the S3 answer is not well-formed XML: "))
        }
    }

    @Test func everyTruncationOfARealAnswerFailsCleanly() {
        let whole = Self.bytes(Self.listParts)
        for end in 0..<whole.count {
            #expect(throws: S3XMLError.self) { try S3XML.partsPage(Array(whole[..<end])) }
        }
    }

    @Test func entitiesCDATAAndCommentsInText() throws {
        let xml = "<?xml version=\"1.0\"?><!-- c --><Error ><Code>A<!-- inside -->B</Code>"
            + "<Message>&quot;&amp;&lt;&gt;&apos;&#65;&#x42;&#X43;<![CDATA[<raw> & ]]></Message></Error>"
        let error = try S3XML.error(Self.bytes(xml))
        #expect(error.code == S3ErrorCode("AB"))
        #expect(error.message == "\"&<>'ABC<raw> & ")
    }

    @Test func tooLargeIsRefusedBeforeReading() {
        let huge = [UInt8](repeating: 0x20, count: S3XML.maximumDocumentBytes + 1)
        #expect(throws: S3XMLError.tooLarge(bytes: huge.count, limit: S3XML.maximumDocumentBytes)) { try S3XML.error(huge) }
    }

    @Test func theCompleteBodyListsThePartsInOrder() throws {
        let body = try S3XML.completeMultipartUploadBody([S3CompletedPart(number: 2, etag: "\"b&<>\""),
                                                          S3CompletedPart(number: 1, etag: "\"a\"")])
        #expect(body == #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
            + #"<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"#
            + #"<Part><PartNumber>1</PartNumber><ETag>"a"</ETag></Part>"#
            + #"<Part><PartNumber>2</PartNumber><ETag>"b&amp;&lt;&gt;"</ETag></Part></CompleteMultipartUpload>"#)
        // What it writes, it reads back.
        let listed = try S3XML.partsPage(Self.bytes(body.replacing("CompleteMultipartUpload", with: "ListPartsResult")
            .replacing("</ETag>", with: "</ETag><Size>1</Size>")))
        #expect(listed.parts.map(\.etag) == ["\"a\"", "\"b&<>\""])
    }

    @Test func theCompleteBodyRefusesAPartListS3Would() {
        #expect(throws: S3XMLError.missingField("Part", in: "CompleteMultipartUpload")) { try S3XML.completeMultipartUploadBody([]) }
        #expect(throws: S3XMLError.invalidValue("1", field: "PartNumber")) {
            try S3XML.completeMultipartUploadBody([S3CompletedPart(number: 1, etag: "a"), S3CompletedPart(number: 1, etag: "b")])
        }
        #expect(throws: S3XMLError.invalidValue("0", field: "PartNumber")) {
            try S3XML.completeMultipartUploadBody([S3CompletedPart(number: 0, etag: "a")])
        }
        #expect(throws: S3XMLError.invalidValue("10001", field: "PartNumber")) {
            try S3XML.completeMultipartUploadBody([S3CompletedPart(number: 10001, etag: "a")])
        }
        #expect(throws: S3XMLError.invalidValue("a\nb", field: "ETag")) {
            try S3XML.completeMultipartUploadBody([S3CompletedPart(number: 1, etag: "a\nb")])
        }
    }
}
