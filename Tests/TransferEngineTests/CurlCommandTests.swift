import Testing
@testable import TransferEngine

@Suite struct CurlCommandTests {
    func job(_ kind: JobKind, url: String, headers: [String] = [], method: String? = nil, upload: UploadSpec? = nil) -> Job {
        var job = Job(Job.Fields(id: JobID(rawValue: 1), kind: kind, state: .paused, url: url, path: kind == .download ? "/d/f.iso" : nil,
                      headers: headers, overwrite: false, priority: .normal, limit: 1024, maxRetries: 7, bytesDone: 0,
                      attempts: 1, createdAt: Timestamp(rawValue: 0), updatedAt: Timestamp(rawValue: 0)))
        job.method = method
        job.upload = upload
        return job
    }

    @Test func aResumedDownloadAsksForTheRestWithItsValidator() {
        var resume = ResumeData(job: job(.download, url: "https://h/f.iso"),
                                state: ResumeState(partialPath: "/d/.f.iso.transferd-part", bytesDurable: 4096,
                                                   validators: Validators(etag: "\"e1\"")))
        resume.bytesTotal = 10_000
        let line = CurlCommand.line(for: job(.download, url: "https://u:pw@h/f.iso", headers: ["Cookie: a=b", "X: 1"]),
                                    resume: resume)
        #expect(line == #"curl --fail --location --max-redirs 10 -H 'Cookie: <redacted>' -H 'X: 1' --limit-rate 1024 --proto-redir =https --continue-at 4096 -H 'If-Range: "e1"' --output /d/.f.iso.transferd-part 'https://u:<redacted>@h/f.iso'"#)
        #expect(!line.contains("pw@"))
    }

    @Test func aFormUploadListsItsPartsInCurlSyntax() {
        let source = SourceFile(path: "/tmp/a b.txt", size: 3, modified: 0)
        let form: [FormPart] = [.field(name: "title", value: "it's"),
                                .file(name: "doc", source: source, filename: #"we;ird "q".txt"#, contentType: "text/plain")]
        let line = CurlCommand.line(for: job(.upload, url: "http://h/up", method: "PUT",
                                             upload: UploadSpec(boundary: "b", form: form)), resume: nil)
        #expect(line == #"curl --fail --location --max-redirs 10 --limit-rate 1024 --request PUT --form 'title=it'\''s' --form 'doc=@"/tmp/a b.txt";type=text/plain;filename="we;ird \"q\".txt"' http://h/up"#)
    }

    @Test func presignedURLsAndSecretFormFieldsAreRedacted() {
        let form: [FormPart] = [.field(name: "key", value: "uploads/a.txt"), .field(name: "Policy", value: "eyJleHAi"),
                                .field(name: "x-amz-signature", value: "f00d"), .field(name: "title", value: "visible")]
        let line = CurlCommand.line(for: job(.upload, url: "https://b.s3.amazonaws.com/?X-Amz-Signature=f00d&a=1",
                                             method: "POST", upload: UploadSpec(boundary: "b", form: form)), resume: nil)
        #expect(line == "curl --fail --location --max-redirs 10 --limit-rate 1024 --proto-redir =https --form 'key=<redacted>' --form 'Policy=<redacted>' --form 'x-amz-signature=<redacted>' --form title=visible 'https://b.s3.amazonaws.com/?X-Amz-Signature=<redacted>&a=1'")
    }

    @Test func wordsWithControlsOrRawBytesAreQuotedSoTheShellReadsTheSameBytes() {
        #expect(CurlCommand.quote("plain/path.bin") == "plain/path.bin")
        #expect(CurlCommand.quote("it's") == #"'it'\''s'"#)
        #expect(CurlCommand.quote("a\nb\u{1B}[31m") == #"$'a\nb\x1b[31m'"#)
        #expect(CurlCommand.quote("/d/" + RawPath.string(fromBytes: [0x63, 0xE9]) + " it's \\x") == #"$'/d/c\xe9 it\'s \\x'"#)
        var download = job(.download, url: "http://h/f")
        download.path = "/d/new\nline.bin"
        #expect(CurlCommand.line(for: download, resume: nil).hasSuffix(#"--output $'/d/.new\nline.bin.transferd-part' http://h/f"#))
    }

    @Test func urlPasswordsAreRedacted() {
        #expect(Redaction.url("https://user:secret@host:8443/p?q=1") == "https://user:<redacted>@host:8443/p?q=1")
        #expect(Redaction.url("https://host/p@x") == "https://host/p@x", "an @ in the path is not a password")
        #expect(Redaction.url("https://user@host/") == "https://user@host/", "no password, nothing to hide")
    }
}
