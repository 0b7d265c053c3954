import FoundationEssentials

/// Checks a job before it is queued, so that a bad URL or path is refused with one clear line
/// instead of failing later.
enum JobValidation {
    static func validate(_ job: NewJob) throws(JobRefusal) {
        if let remote = job.remote {
            try validate(remote, of: job)
        } else {
            try validateURL(job.url)
        }
        try validateCommon(job)
        guard job.kind == .download else { return }
        if let directory = job.outputDirectory {
            guard job.path == nil else { throw JobRefusal.invalid("a download has a destination file or a directory, not both") }
            guard directory.hasPrefix("/") else {
                throw JobRefusal.invalid("the output directory must be an absolute path: \(directory)")
            }
            if let existing = PartialFile.existing(at: directory), !existing.isDirectory {
                throw JobRefusal.invalid("\(directory) is not a directory")
            }
            guard job.resumeData == nil else {
                throw JobRefusal.invalid("resume data names its file: give -o PATH, not a directory")
            }
            return
        }
        guard let path = job.path, !path.isEmpty else {
            throw JobRefusal.invalid("a download needs a destination: -o PATH, -o DIR/ or -O")
        }
        guard path.hasPrefix("/") else {
            throw JobRefusal.invalid("the destination must be an absolute path: \(path)")
        }
        guard !path.hasSuffix("/") else {
            throw JobRefusal.invalid("the destination is a directory, not a file: \(path)")
        }
        if let existing = PartialFile.existing(at: path) {
            // Only a regular file is ever replaced, with --overwrite.
            guard existing.isRegularFile else { throw JobRefusal.invalid(TransferError.notRegularFile(path: path).message) }
            guard job.overwrite || job.onExists == .overwrite || job.onExists == .rename else {
                throw JobRefusal.invalid(TransferError.destinationExists(path: path).message)
            }
        }
        if let resume = job.resumeData {
            try validate(resume, for: path)
        }
    }

    /// A tus or S3 job's URL and settings.
    private static func validate(_ remote: RemoteOptions, of job: NewJob) throws(JobRefusal) {
        if let chunk = remote.chunkSize {
            guard chunk >= RemoteOptions.minimumChunk, NumericLimits.bytes.contains(chunk) else {
                throw JobRefusal.invalid("--chunk-size must be at least \(ByteCount.describe(RemoteOptions.minimumChunk))")
            }
        }
        switch remote.kind {
        case .tus:
            guard job.kind == .upload else { throw JobRefusal.invalid("--tus applies to uploads only") }
            guard job.form == nil, job.path != nil else { throw JobRefusal.invalid("a tus upload sends one file: -T FILE") }
            guard job.method == nil else { throw JobRefusal.invalid("a tus upload chooses its own methods: drop --method") }
            try validateURL(job.url)
        case .s3:
            if job.kind == .upload {
                guard job.form == nil, job.path != nil else { throw JobRefusal.invalid("an S3 upload sends one file: -T FILE") }
                guard job.method == nil else { throw JobRefusal.invalid("an S3 upload chooses its own methods: drop --method") }
            }
            do {
                _ = try S3Location(parsing: job.url)
                _ = try S3Endpoint(url: remote.endpoint, region: remote.region ?? AWSCredentialSource.defaultRegion)
            } catch {
                throw JobRefusal.invalid(error.message)
            }
            if let chunk = remote.chunkSize {
                do { _ = try S3PartPlan(fileSize: 0, requestedPartSize: chunk) } catch { throw JobRefusal.invalid(error.message) }
            }
            if let endpoint = remote.endpoint { try validateURL(endpoint) }
        }
    }

    /// What downloads and uploads share.
    private static func validateCommon(_ job: NewJob) throws(JobRefusal) {
        if let sha256 = job.sha256 {
            guard sha256.count == 64, sha256.allSatisfy(\.isHexDigit) else {
                throw JobRefusal.invalid("--sha256 needs 64 hexadecimal digits, got '\(sha256)'")
            }
        }
        do { try job.checkNumbers() } catch { throw JobRefusal.invalid(error.message) }
        if let network = job.network { try validate(network, kind: job.kind) }
        // (UTF-8 bytes, not Characters: "\r\n" is one Character and would hide inside a header.)
        for header in job.headers where !header.contains(":") || header.utf8.contains(where: { $0 == 10 || $0 == 13 }) {
            throw JobRefusal.invalid("a header must look like 'Name: value', got '\(header)'")
        }
    }

    /// The network options' rules, and that the daemon can read a netrc file now (it reads it
    /// at every attempt, as its own user, which need not be the client's).
    private static func validate(_ network: NetworkOptions, kind: JobKind) throws(JobRefusal) {
        do { try network.check() } catch { throw JobRefusal.invalid(error.message) }
        if network.compressed, kind != .download {
            throw JobRefusal.invalid("--compressed applies to downloads only")
        }
        if let problem = network.netrcProblem() { throw JobRefusal.invalid(problem.message) }
    }

    /// Parses the URL with libcurl's own parser and the flags a transfer uses, so that what
    /// would fail every attempt is refused now, with libcurl's reason (a URL of the plain shape
    /// libcurl surely accepts is read without it: `CurlURL.plain`).
    static func validateURL(_ text: String) throws(JobRefusal) {
        guard !Redaction.isRedacted(text) else {
            throw JobRefusal.invalid("the URL '\(shown(text))' holds \(Redaction.marker) where a secret was: "
                + "give the real URL (with --resume-data: transferctl download URL --resume-data FILE)")
        }
        let parts = try parsed(text)
        guard CurlURL.protocols.contains(parts.scheme) else {
            throw JobRefusal.invalid("unsupported URL scheme '\(parts.scheme)' in '\(shown(text))': use http:// or https://")
        }
        guard !parts.host.isEmpty else {
            throw JobRefusal.invalid("malformed URL '\(shown(text))': no host")
        }
    }

    private static func parsed(_ text: String) throws(JobRefusal) -> CurlURL.Parts {
        if let plain = CurlURL.plain(text) { return plain }
        do {
            return try CurlURL.parse(text)
        } catch {
            let hint = error.isBadCharacters ? " (percent-encode spaces and control characters, e.g. %20 for a space)"
                : error.lacksScheme ? " (expected http:// or https://)" : ""
            throw JobRefusal.invalid("malformed URL '\(shown(text))': \(error)\(hint)")
        }
    }

    /// A URL as an error message may show it: secrets redacted, control characters escaped.
    private static func shown(_ url: String) -> String {
        var shown = ""
        for scalar in Redaction.url(url).unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                shown += "%" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16, uppercase: true)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    private static func validate(_ resume: ResumeData, for path: String) throws(JobRefusal) {
        guard (1...ResumeData.currentVersion).contains(resume.version) else {
            throw JobRefusal.invalid("resume data version \(resume.version) is not one this transferd understands (1...\(ResumeData.currentVersion))")
        }
        guard PartialFile.partialPath(for: path) == resume.partialPath else {
            throw JobRefusal.invalid("the resume data's partial file \(resume.partialPath) does not belong to \(path); use -o \(resume.path)")
        }
        guard let partial = PartialFile.existing(at: resume.partialPath), partial.size >= resume.bytesReceived else {
            throw JobRefusal.invalid("the partial file \(resume.partialPath) is missing or shorter than the \(resume.bytesReceived) bytes the resume data records")
        }
    }
}
