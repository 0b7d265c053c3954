import Testing
@testable import TransferEngine

@Suite struct DownloadDecisionTests {
    let partial = ResumeState(partialPath: "/tmp/.f.transferd-part", bytesDurable: 100,
                              validators: Validators(etag: "\"abc\"", lastModified: "Sun, 29 Nov 2026 10:00:00 GMT"),
                              bytesTotal: 1000)

    func head(_ status: Int, _ fields: [String: String] = [:]) -> ResponseHead {
        ResponseHead(status: status, fields: fields)
    }

    @Test func partialContentAtOurOffsetAppends() {
        let decision = DownloadDecision.decide(head(206, ["content-range": "bytes 100-999/1000", "etag": "\"abc\""]),
                                               offset: 100, resume: partial)
        #expect(decision == .append(total: 1000))
    }

    @Test func partialContentAtAnotherOffsetStartsOver() {
        let decision = DownloadDecision.decide(head(206, ["content-range": "bytes 0-999/1000"]), offset: 100, resume: partial)
        guard case .startOver = decision else { Issue.record("got \(decision)"); return }
    }

    @Test func partialContentWithAnotherETagStartsOver() {
        let decision = DownloadDecision.decide(head(206, ["content-range": "bytes 100-999/1000", "etag": "\"xyz\""]),
                                               offset: 100, resume: partial)
        guard case .startOver = decision else { Issue.record("got \(decision)"); return }
    }

    @Test func partialContentWithoutContentRangeStartsOver() {
        guard case .startOver = DownloadDecision.decide(head(206), offset: 100, resume: partial) else {
            Issue.record("206 without Content-Range must not append"); return
        }
    }

    /// rclone serve s3 answers a ranged GET with 200, the range's Content-Range and its length:
    /// taken as the whole entity, a 1000-byte file would complete at 900.
    @Test func okWithThePartOfARangeIsAContradictionNotAWholeEntity() {
        let tail = head(200, ["content-range": "bytes 100-999/1000", "content-length": "900", "etag": "\"abc\""])
        guard case .startOver(let reason) = DownloadDecision.decide(tail, offset: 100, resume: partial) else {
            Issue.record("a 200 carrying part of the entity was taken for the whole"); return
        }
        #expect(reason.contains("contradicts itself") && reason.contains("bytes 100-999/1000"))
        // From byte 0, the same server's Content-Range names the whole entity: that is one.
        let whole = head(200, ["content-range": "bytes 0-999/1000", "content-length": "1000", "etag": "\"abc\""])
        #expect(DownloadDecision.decide(whole, offset: 0, resume: ResumeState(partialPath: "/tmp/p"))
                == .writeFromStart(validators: Validators(etag: "\"abc\""), total: 1000))
    }

    @Test func theSameEntityWithAnotherLengthIsAContradiction() {
        // 200 (ranges ignored) with our strong ETag but another length than it had.
        let shorter = head(200, ["etag": "\"abc\"", "content-length": "600"])
        guard case .startOver = DownloadDecision.decide(shorter, offset: 100, resume: partial) else {
            Issue.record("the same ETag with another length was believed"); return
        }
        let total = head(206, ["content-range": "bytes 100-599/600", "etag": "\"abc\""])
        guard case .startOver = DownloadDecision.decide(total, offset: 100, resume: partial) else {
            Issue.record("a Content-Range total other than the entity's was appended"); return
        }
        let body = head(206, ["content-range": "bytes 100-999/1000", "content-length": "10", "etag": "\"abc\""])
        guard case .startOver = DownloadDecision.decide(body, offset: 100, resume: partial) else {
            Issue.record("a body shorter than its Content-Range was appended"); return
        }
    }

    @Test func okReplacesWhatWeHadWithTheNewEntity() {
        let decision = DownloadDecision.decide(head(200, ["etag": "\"new\"", "content-length": "500"]), offset: 100, resume: partial)
        #expect(decision == .writeFromStart(validators: Validators(etag: "\"new\""), total: 500))
    }

    @Test func rangeNotSatisfiableWithCompleteFileFinishes() {
        var complete = partial
        complete.bytesDurable = 1000
        #expect(DownloadDecision.decide(head(416), offset: 1000, resume: complete) == .complete)
        var unknownTotal = complete
        unknownTotal.bytesTotal = nil
        #expect(DownloadDecision.decide(head(416, ["content-range": "bytes */1000"]), offset: 1000, resume: unknownTotal) == .complete)
    }

    @Test func rangeNotSatisfiableOtherwiseStartsOver() {
        guard case .startOver = DownloadDecision.decide(head(416), offset: 100, resume: partial) else {
            Issue.record("416 with an incomplete file must start over"); return
        }
    }

    @Test func errorStatusesFailWithoutWriting() {
        #expect(DownloadDecision.decide(head(404), offset: 0, resume: partial) == .fail(.httpStatus(404)))
        #expect(DownloadDecision.decide(head(500), offset: 100, resume: partial) == .fail(.httpStatus(500)))
        #expect(DownloadDecision.decide(head(304), offset: 100, resume: partial) == .fail(.httpStatus(304)))
    }

    @Test func redirectsAndInterimResponsesAreNotFinal() {
        #expect(DownloadDecision.decide(head(100), offset: 0, resume: partial) == .ignore)
        #expect(DownloadDecision.decide(head(302, ["location": "/x"]), offset: 0, resume: partial) == .ignore)
    }

    @Test func aRedirectLibcurlDoesNotFollowIsFollowedByTheTransfer() {
        #expect(DownloadDecision.decide(head(302, ["location": "/x"]), offset: 0, resume: partial,
                                        followingRedirects: false) == .redirect)
        #expect(DownloadDecision.decide(head(302), offset: 0, resume: partial, followingRedirects: false) == .fail(.httpStatus(302)),
                "a redirect without Location is an answer")
    }

    @Test func ifRangePrefersAStrongETag() {
        #expect(Validators(etag: "\"a\"", lastModified: "date").ifRange == "\"a\"")
        #expect(Validators(etag: "W/\"a\"", lastModified: "date").ifRange == "date")
        #expect(Validators(etag: nil, lastModified: nil).ifRange == nil)
    }
}

@Suite struct ResponseHeadTests {
    @Test func parsesTheFinalResponseAfterARedirect() {
        var parser = ResponseHeadParser()
        let lines = ["HTTP/1.1 302 Found\r\n", "Location: /b\r\n", "\r\n",
                     "HTTP/1.1 206 Partial Content\r\n", "ETag: \"e\"\r\n", "Content-Range: bytes 5-9/10\r\n", "\r\n"]
        let heads = lines.compactMap { parser.consume($0) }
        #expect(heads.map(\.status) == [302, 206])
        #expect(heads[0].location == "/b")
        #expect(heads[1].etag == "\"e\"")
        #expect(heads[1].contentRange == ContentRange(first: 5, last: 9, total: 10))
    }

    @Test func acceptsBareLineFeeds() {
        var parser = ResponseHeadParser()
        let heads = ["HTTP/1.0 200 OK\n", "ETag: \"x\"\n", "\n"].compactMap { parser.consume($0) }
        #expect(heads.map(\.status) == [200])
        #expect(heads.first?.etag == "\"x\"")
    }

    @Test func linesAreKeptOnlyWhenAsked() {
        let lines = ["HTTP/1.1 201 Created\r\n", "Location:  /u/1 \r\n", "X-Id: 7\r\n", "\r\n"]
        var keeping = ResponseHeadParser(keepingLines: true)
        var reading = ResponseHeadParser()
        let kept = lines.compactMap { keeping.consume($0) }
        let read = lines.compactMap { reading.consume($0) }
        #expect(kept.map(\.lines) == [["Location:  /u/1 ", "X-Id: 7"]])  // as received, less the CRLF
        #expect(read.map(\.lines) == [[]])
        #expect(kept.map(\.fields) == read.map(\.fields))
        #expect(read.first?.fields == ["location": "/u/1", "x-id": "7"])
    }

    @Test func aDownloadsParserKeepsTheFieldsADownloadReadsAndNoOthers() {
        let lines = ["HTTP/1.1 200 OK\r\n", "Server: nginx\r\n", "Date: Tue, 01 Dec 2026 21:00:00 GMT\r\n",
                     "Content-Type: application/octet-stream\r\n", "Content-Length: 65536\r\n",
                     "Last-Modified: Tue, 01 Dec 2026 20:00:00 GMT\r\n", "Connection: keep-alive\r\n",
                     "ETag: \"692d\"\r\n", "Accept-Ranges: bytes\r\n", "Retry-After: 5\r\n",
                     "Content-Disposition: attachment; filename=a.bin\r\n", "\r\n"]
        var parser = ResponseHeadParser(keepingOnly: ResponseHead.downloadFields)
        var all = ResponseHeadParser()
        let head = lines.compactMap { parser.consume($0) }.first
        let whole = lines.compactMap { all.consume($0) }.first
        #expect(head?.fields == whole?.fields.filter { ResponseHead.downloadFields.contains($0.key) })
        #expect(head?.fields.count == 5 && whole?.fields.count == 10)
        #expect(head?.contentLength == 65536 && head?.etag == "\"692d\"" && head?.validators == whole?.validators)
    }

    @Test func contentRangeForms() {
        #expect(ContentRange("bytes 0-0/1") == ContentRange(first: 0, last: 0, total: 1))
        #expect(ContentRange("bytes */77") == ContentRange(first: nil, last: nil, total: 77))
        #expect(ContentRange("bytes 10-20/*") == ContentRange(first: 10, last: 20, total: nil))
        #expect(ContentRange("bytes 20-10/100") == nil)
        #expect(ContentRange("items 1-2/3") == nil)
        #expect(ContentRange("bytes 1-2") == nil)
        #expect(ContentRange("bytes a-b/c") == nil)
    }
}
