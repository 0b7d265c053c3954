import TransferEngine

/// Human output for jobs: a table for `list`, a block for `show`, a line for `wait`; printed
/// with `Context.print`, which escapes what the job's text holds (`TerminalText`).
enum JobFormatter {
    /// A resumable job's protocol, its settings, and where an unfinished upload stands.
    static func remoteText(_ remote: RemoteOptions, _ job: Job, session: UploadSession? = nil) -> String {
        var parts: [String] = [remote.kind == .tus ? "tus 1.0" : "S3"]
        if let endpoint = remote.endpoint { parts.append("endpoint \(endpoint)") }
        if let region = remote.region { parts.append("region \(region)") }
        if let profile = remote.profile { parts.append("profile \(profile)") }
        if let chunk = session?.chunkSize {
            parts.append("chunks of \(ByteCount.describe(chunk)) (the server refused larger ones: HTTP 413)")
        } else if let chunk = remote.chunkSize {
            parts.append("\(remote.kind == .tus ? "chunks" : "parts") of \(ByteCount.describe(chunk))")
        }
        if session?.terminates == false { parts.append("the server offers no termination: a cancel leaves the upload to expire") }
        var text = parts.joined(separator: ", ")
        // While it runs, its bytes include those in flight the server has not acknowledged.
        if job.kind == .upload, !job.state.isFinal, job.state != .running, job.bytesDone > 0 {
            text += "; continues from byte \(job.bytesDone), as the server reports"
        } else if job.kind == .upload, job.state == .running {
            text += "; continues from what the server reports holding, after an interruption"
        }
        return text
    }

    static func progress(_ job: Job) -> String {
        guard let total = job.bytesTotal, total > 0 else { return ByteCount.describe(job.bytesDone) }
        return "\(percent(job.bytesDone, of: total))% of \(ByteCount.describe(total))"
    }

    /// Whole percent, rounded down; whatever numbers the daemon sends, never a trap.
    static func percent(_ done: Int64, of total: Int64) -> Int {
        total > 0 ? Int(saturating: (Double(done) / Double(total) * 100).rounded(.down)) : 100
    }

    static func table(_ jobs: [Job]) -> [String] {
        guard !jobs.isEmpty else { return ["no jobs"] }
        let rows = jobs.map { job in
            [job.id.description, job.state.rawValue, progress(job), what(job)]
        }
        let header = ["ID", "STATE", "PROGRESS", "TRANSFER"]
        return TextTable.render(header, rows)
    }

    /// What a job moves, with a download's destination and an upload's source named as such:
    /// `download to PATH`, `upload of PATH to URL`, `upload of a form (N files) to URL`.
    static func what(_ job: Job) -> String {
        switch job.kind {
        case .download:
            if job.path == nil, let directory = job.outputDirectory { return "download into \(directory)/ (named by the server)" }
            return "download to \(job.path ?? "?")"
        case .upload:
            if let raw = job.upload?.raw { return "upload of \(raw.path) to \(job.url)" }
            let files = job.upload?.sources.count ?? 0
            return "upload of a form (\(files) file\(files == 1 ? "" : "s")) to \(job.url)"
        }
    }

    static func detail(_ job: Job, attempts: [AttemptRecord], response: UploadResponse? = nil,
                       session: UploadSession? = nil) -> [String] {
        var lines = ["job \(job.id) (\(job.kind.rawValue))"]
        func field(_ name: String, _ value: String?) {
            guard let value else { return }
            lines.append("  " + (name + ":").padding(to: 11) + value)
        }
        field("state", job.state.rawValue + (job.stateReason.map { " (\($0))" } ?? ""))
        field("url", job.url)
        field("method", job.method)
        field("hdr cmd", job.headerCommand.map { "\($0) (run before each attempt; what it prints is sent, never shown)" })
        field("idem. key", job.idempotencyKey)
        if job.retryUnsafe { field("retries", "also when the server may have acted on the request (--retry-unsafe)") }
        field("path", job.path ?? job.outputDirectory.map { "\($0)/ (the server's answer names the file)" })
        if job.existing != .fail { field("if exists", job.existing.rawValue) }
        for part in job.upload?.form ?? [] {
            switch part {
            case .field(let name, let value): field("field", "\(name)=\(value)")
            case .file(let name, let source, let filename, let contentType):
                field("file", "\(name)=@\(source.path) (\(filename), \(contentType), \(ByteCount.describe(source.size)))")
            }
        }
        field("progress", job.bytesTotal.map { total in
            "\(ByteCount.describe(job.bytesDone)) of \(ByteCount.describe(total)) (\(percent(job.bytesDone, of: total))%)"
        } ?? ByteCount.describe(job.bytesDone))
        if let remote = job.remote { field("protocol", remoteText(remote, job, session: session)) }
        field("attempts", "\(job.attempts) (up to \(job.maxRetries) retries)")
        field("http", job.httpStatus.map(String.init))
        field("error", job.error.map { "\($0.code): \($0.message)" })
        field("next try", job.nextAttemptAt?.iso8601)
        field("sha256", job.sha256)
        if job.tls.insecure { field("tls", "INSECURE: the server is not verified (--insecure)") }
        field("cacert", job.tls.cacert)
        field("pinned key", job.tls.pinnedPublicKey)
        field("client cert", job.tls.cert)
        let redirects = [job.tls.allowInsecureRedirect ? "may go from https to http" : nil,
                         job.tls.locationTrusted ? "secret headers go to any host (--location-trusted)" : nil].compactMap { $0 }
        if !redirects.isEmpty { field("redirects", redirects.joined(separator: "; ")) }
        for (name, value) in network(Redaction.network(job.network)) { field(name, value) }
        field("limit", job.limit.map { Rate.describe($0) })
        field("max size", job.maxFilesize.map { ByteCount.describe($0) })
        field("priority", job.priority.rawValue)
        field("created", job.createdAt.iso8601)
        field("finished", job.finishedAt?.iso8601)
        // A tus or S3 upload continues from what its server holds (the protocol line says so).
        if job.kind == .upload, job.remote == nil, !job.state.hasEnded {
            lines.append("  note:      an upload sends its body from the first byte again after a pause or an interruption")
        }
        if !attempts.isEmpty {
            lines.append("attempts:")
            for attempt in attempts {
                var parts = ["  #\(attempt.number)", attempt.startedAt.iso8601]
                if attempt.rangeStart > 0 { parts.append("from byte \(attempt.rangeStart)") }
                if let status = attempt.httpStatus { parts.append("HTTP \(status)") }
                parts.append(ByteCount.describe(attempt.bytes))
                if let error = attempt.error { parts.append("\(error.code): \(error.message)") }
                lines.append(parts.joined(separator: "  "))
                if let reason = attempt.startedOver { lines.append("      started from byte 0: \(reason.message)") }
                if let refusal = attempt.notRetried { lines.append("      not retried: \(refusal.message)") }
                if let metrics = attempt.metrics { lines.append("      " + timings(metrics)) }
            }
        }
        if let response {
            lines.append("response: HTTP \(response.status)")
            for header in response.headers { lines.append("  " + header) }
            // The body line by line (a CRLF ends a line too).
            if !response.body.isEmpty {
                for line in response.body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                    lines.append(String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self))
                }
                if response.body.last == UInt8(ascii: "\n") { lines.removeLast() }
            }
            if response.truncated { lines.append("[... truncated at 64 KiB]") }
        }
        return lines
    }

    /// The `show` lines of a job's network options (secrets already redacted), in order.
    static func network(_ network: NetworkOptions) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let proxy = network.proxy {
            fields.append(("proxy", proxy.isEmpty ? "none (not even the daemon's http_proxy or https_proxy)"
                : network.noProxy == nil ? proxy + " (for every host: the daemon's no_proxy does not apply)" : proxy))
        }
        if let noProxy = network.noProxy { fields.append(("no proxy", noProxy.isEmpty ? "(none)" : noProxy)) }
        let timeouts = [network.connectTimeout.map { "connect within \(NetworkOptions.describe(seconds: $0)) s" },
                        network.maxTime.map { "at most \(NetworkOptions.describe(seconds: $0)) s per attempt (--max-time)" }]
            .compactMap { $0 }
        if !timeouts.isEmpty { fields.append(("timeouts", timeouts.joined(separator: ", "))) }
        if network.compressed {
            fields.append(("encoding", "compressed if the server will (--compressed); decoded as it arrives"))
        }
        if let user = network.user {
            fields.append(("user", "\(user), password \(network.password ?? "(none)") (Basic or Digest, as the server asks)"))
        }
        if let netrcFile = network.netrcFile { fields.append(("netrc", netrcFile)) }
        if let version = network.ipVersion { fields.append(("ip", "IPv\(version.rawValue) only (-\(version.rawValue))")) }
        if !network.resolve.isEmpty { fields.append(("resolve", network.resolve.joined(separator: ", "))) }
        return fields
    }

    /// `dns 0.1 ms, connect 0.3 ms, tls 4.0 ms, first byte 5.2 ms, total 1.20 s, HTTP/1.1 127.0.0.1:8080, 512.0 MiB/s`
    static func timings(_ metrics: AttemptMetrics) -> String {
        func time(_ milliseconds: Double) -> String {
            milliseconds >= 1000 ? "\((milliseconds / 10).rounded() / 100) s" : "\((milliseconds * 10).rounded() / 10) ms"
        }
        var parts = ["dns \(time(metrics.nameLookupMs))", "connect \(time(metrics.connectMs))"]
        if metrics.tlsMs > 0 { parts.append("tls \(time(metrics.tlsMs))") }
        parts += ["first byte \(time(metrics.firstByteMs))", "total \(time(metrics.totalMs))"]
        var route = metrics.httpVersion.map { "HTTP/\($0)" } ?? ""
        if let address = metrics.remoteAddress { route += (route.isEmpty ? "" : " ") + address }
        if !route.isEmpty { parts.append(route) }
        parts.append(Rate.describe(metrics.bytesPerSecond))
        return parts.joined(separator: ", ")
    }

    static func outcome(_ outcome: JobOutcome) -> String {
        var line = "job \(outcome.id) \(outcome.state.rawValue)"
        if let error = outcome.error { line += ": \(error.code): \(error.message)" }
        return line
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
