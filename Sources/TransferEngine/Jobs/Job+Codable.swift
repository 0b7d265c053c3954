/// The job JSON of SPEC.md: camelCase keys, every key present (null when unknown), secrets
/// redacted (`Redaction`): the daemon keeps jobs in its store, never as this JSON.
extension Job.Fields: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, kind, state, stateReason, url, path, outputDir, partialPath, headers, sha256, overwrite, onExists, bytesDone,
             bytesTotal, attempts, maxRetries, httpStatus, error, priority, batch, limit, nextAttemptAt,
             createdAt, updatedAt, finishedAt, startedAt, rate, etaSeconds, method, form, upload, tls, network, remote, key, onComplete, onFail, idempotencyKey,
             retryUnsafe, maxFilesize, waitReason, headerCommand
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(state, forKey: .state)
        try container.encode(stateReason, forKey: .stateReason)
        try container.encode(Redaction.url(url), forKey: .url)
        try container.encode(path, forKey: .path)
        try container.encode(outputDirectory, forKey: .outputDir)
        try container.encode(partialPath, forKey: .partialPath)
        try container.encode(Redaction.headers(headers), forKey: .headers)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(overwrite, forKey: .overwrite)
        try container.encode(existing, forKey: .onExists)
        try container.encode(bytesDone, forKey: .bytesDone)
        try container.encode(bytesTotal, forKey: .bytesTotal)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(maxRetries, forKey: .maxRetries)
        try container.encode(httpStatus, forKey: .httpStatus)
        try container.encode(error, forKey: .error)
        try container.encode(priority, forKey: .priority)
        try container.encode(batch, forKey: .batch)
        try container.encode(limit, forKey: .limit)
        try container.encode(nextAttemptAt, forKey: .nextAttemptAt)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(finishedAt, forKey: .finishedAt)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(rate, forKey: .rate)
        try container.encode(etaSeconds, forKey: .etaSeconds)
        try container.encode(method, forKey: .method)
        let shown = Redaction.upload(upload)
        try container.encode(shown?.form, forKey: .form)
        try container.encode(shown, forKey: .upload)
        try container.encode(tls, forKey: .tls)
        try container.encode(Redaction.network(network), forKey: .network)
        try container.encode(remote, forKey: .remote)
        try container.encode(key, forKey: .key)
        try container.encode(onComplete, forKey: .onComplete)
        try container.encode(onFail, forKey: .onFail)
        try container.encode(headerCommand, forKey: .headerCommand)
        try container.encode(maxFilesize, forKey: .maxFilesize)
        try container.encode(waitReason, forKey: .waitReason)
        try container.encode(idempotencyKey, forKey: .idempotencyKey)
        try container.encode(retryUnsafe, forKey: .retryUnsafe)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(JobID.self, forKey: .id)
        kind = try container.decode(JobKind.self, forKey: .kind)
        state = try container.decode(JobState.self, forKey: .state)
        stateReason = try container.decodeIfPresent(String.self, forKey: .stateReason)
        url = try container.decode(String.self, forKey: .url)
        path = try container.decodeIfPresent(String.self, forKey: .path)
        outputDirectory = try container.decodeIfPresent(String.self, forKey: .outputDir)
        headers = try container.decodeIfPresent([String].self, forKey: .headers) ?? []
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        overwrite = try container.decodeIfPresent(Bool.self, forKey: .overwrite) ?? false
        onExists = try container.decodeIfPresent(OnExists.self, forKey: .onExists) ?? .fail
        bytesDone = try container.decode(Int64.self, forKey: .bytesDone)
        bytesTotal = try container.decodeIfPresent(Int64.self, forKey: .bytesTotal)
        attempts = try container.decode(Int.self, forKey: .attempts)
        maxRetries = try container.decodeIfPresent(Int.self, forKey: .maxRetries) ?? 0
        httpStatus = try container.decodeIfPresent(Int.self, forKey: .httpStatus)
        error = try container.decodeIfPresent(JobError.self, forKey: .error)
        priority = try container.decodeIfPresent(Priority.self, forKey: .priority) ?? .normal
        batch = try container.decodeIfPresent(Int64.self, forKey: .batch)
        limit = try container.decodeIfPresent(Int64.self, forKey: .limit)
        nextAttemptAt = try container.decodeIfPresent(Timestamp.self, forKey: .nextAttemptAt)
        createdAt = try container.decode(Timestamp.self, forKey: .createdAt)
        updatedAt = try container.decode(Timestamp.self, forKey: .updatedAt)
        finishedAt = try container.decodeIfPresent(Timestamp.self, forKey: .finishedAt)
        startedAt = try container.decodeIfPresent(Timestamp.self, forKey: .startedAt)
        rate = try container.decodeIfPresent(Int64.self, forKey: .rate)
        etaSeconds = try container.decodeIfPresent(Int64.self, forKey: .etaSeconds)
        method = try container.decodeIfPresent(String.self, forKey: .method)
        upload = try container.decodeIfPresent(UploadSpec.self, forKey: .upload)
        tls = try container.decodeIfPresent(TLSOptions.self, forKey: .tls) ?? TLSOptions()
        network = try container.decodeIfPresent(NetworkOptions.self, forKey: .network) ?? NetworkOptions()
        remote = try container.decodeIfPresent(RemoteOptions.self, forKey: .remote)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        onComplete = try container.decodeIfPresent(String.self, forKey: .onComplete)
        onFail = try container.decodeIfPresent(String.self, forKey: .onFail)
        headerCommand = try container.decodeIfPresent(String.self, forKey: .headerCommand)
        maxFilesize = try container.decodeIfPresent(Int64.self, forKey: .maxFilesize)
        waitReason = try container.decodeIfPresent(WaitReason.self, forKey: .waitReason)
        idempotencyKey = try container.decodeIfPresent(String.self, forKey: .idempotencyKey)
        retryUnsafe = try container.decodeIfPresent(Bool.self, forKey: .retryUnsafe) ?? false
    }
}

extension Job: Codable {
    public init(from decoder: Decoder) throws {
        self.init(try Fields(from: decoder))
    }

    public func encode(to encoder: Encoder) throws {
        try fields.encode(to: encoder)
    }
}
