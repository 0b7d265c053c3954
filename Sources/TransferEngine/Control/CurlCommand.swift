/// `show ID --curl`: the curl command line that does what the job's next attempt would do
/// (method, headers, range, form parts, limits, TLS and network options), secrets redacted; a
/// job's `--header-command` runs first and pipes its headers in (`-H @-`). Pure.
public enum CurlCommand {
    public static func line(for job: Job, resume: ResumeData?) -> String {
        if job.remote?.kind == .tus {
            return "# a tus upload is a series of requests (POST to create, HEAD for the offset, PATCH per chunk): "
                + "no single curl command does it"
        }
        var words = ["curl", "--fail", job.tls.locationTrusted ? "--location-trusted" : "--location", "--max-redirs", "10"]
        for header in Redaction.headers(job.requestHeaders) { words += ["-H", header] }
        if let limit = job.limit { words += ["--limit-rate", String(limit)] }
        if let maxFilesize = job.maxFilesize { words += ["--max-filesize", String(maxFilesize)] }
        if let cacert = job.tls.cacert { words += ["--cacert", cacert] }
        if let pin = job.tls.pinnedPublicKey { words += ["--pinnedpubkey", pin] }
        if let cert = job.tls.cert { words += ["--cert", cert] }
        if let key = job.tls.key { words += ["--key", key] }
        if job.tls.insecure { words.append("--insecure") }
        if job.url.lowercased().hasPrefix("https:"), !job.tls.allowInsecureRedirect {
            words += ["--proto-redir", "=https"]
        }
        words += networkWords(Redaction.network(job.network))
        switch job.kind {
        case .download:
            // --continue-at appends to the partial file (--range would truncate it and write the
            // rest from its first byte); curl refuses a 200 (the entity changed) instead of appending it.
            if let resume, resume.bytesReceived > 0,
               let validator = Validators(etag: resume.etag, lastModified: resume.lastModified).ifRange {
                words += ["--continue-at", "\(resume.bytesReceived)", "-H", "If-Range: \(validator)"]
            } else if job.network.compressed {
                // As the job: a compressed body only from byte 0 (a range counts encoded bytes).
                words.append("--compressed")
            }
            if job.path == nil, let directory = job.outputDirectory {
                // Not named yet: curl names it from the same answer (-O -J).
                words += ["--output-dir", directory, "--remote-name", "--remote-header-name"]
            } else {
                words += ["--output", resume?.partialPath ?? job.partialPath ?? job.path ?? "-"]
            }
        case .upload:
            if let form = job.upload?.form {
                if job.method != "POST" { words += ["--request", job.method ?? "POST"] }
                for part in Redaction.form(form) { words += ["--form", formArgument(part)] }
            } else if let raw = job.upload?.raw {
                words += ["--upload-file", raw.path]
                if job.method != "PUT" { words += ["--request", job.method ?? "PUT"] }
            }
        }
        // --header-command: what it prints goes to curl as headers read from stdin.
        if job.headerCommand != nil { words += ["-H", "@-"] }
        var signing = ""
        if job.remote?.kind == .s3 {
            // One signed request (S3 takes a single PUT up to 5 GiB; transferd sends parts above
            // 16 MiB), with the caller's AWS credentials from the environment.
            let region = job.remote?.region ?? AWSCredentialSource.defaultRegion
            let payload = AWSSigning.payloadHash(hasBody: job.kind == .upload)
            words += ["--aws-sigv4", "aws:amz:\(region):s3", "-H", "x-amz-content-sha256: \(payload)"]
            signing = " --user \"$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY\""
        }
        words.append(Redaction.url(job.serverURL))
        let curl = words.dropLast().map(quote).joined(separator: " ") + signing + " " + quote(words[words.count - 1])
        return job.headerCommand.map { "sh -c \(quote($0)) | \(curl)" } ?? curl
    }

    /// curl's options for the job's network options (all but `--compressed`), secrets as given.
    static func networkWords(_ network: NetworkOptions) -> [String] {
        var words: [String] = []
        if let proxy = network.proxy { words += ["--proxy", proxy] }
        // As the job: its own proxy ignores the environment's no_proxy (curl's would not).
        if let noProxy = network.noProxy ?? network.proxy.map({ _ in "" }) { words += ["--noproxy", noProxy] }
        if let seconds = network.connectTimeout { words += ["--connect-timeout", NetworkOptions.describe(seconds: seconds)] }
        if let seconds = network.maxTime { words += ["--max-time", NetworkOptions.describe(seconds: seconds)] }
        if network.hasCredentials { words.append("--anyauth") }
        if let user = network.user { words += ["--user", user + ":" + (network.password ?? "")] }
        if let netrcFile = network.netrcFile { words += ["--netrc-file", netrcFile] }
        switch network.ipVersion {
        case .v4: words.append("-4")
        case .v6: words.append("-6")
        case nil: break
        }
        for entry in network.resolve { words += ["--resolve", entry] }
        return words
    }

    /// curl's -F syntax for one part, quoting what needs it.
    static func formArgument(_ part: FormPart) -> String {
        switch part {
        case .field(let name, let value):
            return "\(name)=\(value)"
        case .file(let name, let source, let filename, let contentType):
            func quoted(_ text: String) -> String {
                "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
            }
            return "\(name)=@\(quoted(source.path));type=\(contentType);filename=\(quoted(filename))"
        }
    }

    /// Quotes a word for the shell when it needs it: single quotes, or, for a word holding
    /// controls, bytes that are not UTF-8 or invisible characters, `$'…'` with `TerminalText`'s
    /// escapes (which that quoting reads back as the same bytes), so that the line printed
    /// holds no raw control character and still names the same file.
    static func quote(_ word: String) -> String {
        let safe = word.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@,+%".contains($0) }
        if safe, !word.isEmpty { return word }
        if TerminalText.needsEscaping(word) {
            return "$'" + TerminalText.escape(word.replacing("\\", with: "\\\\").replacing("'", with: "\\'")) + "'"
        }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }
}
