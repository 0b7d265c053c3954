/// A new job read from a manifest chunk's tree by hand (`JSONTreeFields`): the value its
/// synthesized `Decodable` gives, in one pass over the members instead of a search per key.
extension NewJob {
    /// Every member `Decodable` reads, one per stored property (a unit test counts them).
    static let treeKeys: Set<String> = [
        "kind", "url", "path", "outputDirectory", "headers", "sha256", "overwrite", "onExists", "priority", "batch",
        "limit", "retries", "paused", "resumeData", "method", "form", "tls", "network", "remote", "onComplete",
        "onFail", "headerCommand", "umask", "maxFilesize", "retryUnsafe",
    ]

    init(tree: JSONTree, state: JSONTreeState) throws {
        let fields = try JSONTreeFields(tree, state)
        var kind: JobKind?, url: String?, headers: [String]?, overwrite: Bool?, priority: Priority?, paused: Bool?
        var job = NewJob(kind: .download, url: "", path: nil)
        for (key, value) in fields.members {
            switch key {
            case "kind": kind = try fields.word(value)
            case "url": url = try fields.string(value)
            case "path": job.path = try fields.optional(value, fields.string)
            case "outputDirectory": job.outputDirectory = try fields.optional(value, fields.string)
            case "headers": headers = try fields.strings(value)
            case "sha256": job.sha256 = try fields.optional(value, fields.string)
            case "overwrite": overwrite = try fields.bool(value)
            case "onExists": job.onExists = try fields.optional(value, fields.word)
            case "priority": priority = try fields.word(value)
            case "batch": job.batch = try fields.optional(value, fields.integer)
            case "limit": job.limit = try fields.optional(value, fields.integer)
            case "retries": job.retries = try fields.optional(value, fields.integer)
            case "paused": paused = try fields.bool(value)
            case "resumeData": job.resumeData = try fields.optional(value, fields.decoded)
            case "method": job.method = try fields.optional(value, fields.string)
            case "form": job.form = try fields.optional(value, fields.decoded)
            case "tls": job.tls = try fields.optional(value, fields.decoded)
            case "network": job.network = try fields.optional(value, fields.decoded)
            case "remote": job.remote = try fields.optional(value, fields.decoded)
            case "onComplete": job.onComplete = try fields.optional(value, fields.string)
            case "onFail": job.onFail = try fields.optional(value, fields.string)
            case "headerCommand": job.headerCommand = try fields.optional(value, fields.string)
            case "umask": job.umask = try fields.optional(value, fields.integer)
            case "maxFilesize": job.maxFilesize = try fields.optional(value, fields.integer)
            case "retryUnsafe": job.retryUnsafe = try fields.optional(value, fields.bool)
            default: continue  // `Decodable` passes over members it does not know
            }
        }
        job.kind = try fields.required(kind)
        job.url = try fields.required(url)
        job.headers = try fields.required(headers)
        job.overwrite = try fields.required(overwrite)
        job.priority = try fields.required(priority)
        job.paused = try fields.required(paused)
        self = job
    }
}

/// A new job written into a `JSONStream` by hand, as its synthesized `Encodable` writes it
/// (members in declaration order, nil ones left out): `transferctl` writes a manifest's jobs,
/// 250 to a request, and `Encodable`'s containers were a fifth of a `batch submit`'s time.
extension NewJob {
    func write(to stream: JSONStream) throws {
        let depth = stream.depth
        let object = stream.openContainer(UInt8(ascii: "{"), UInt8(ascii: "}"))
        func string(_ name: String, _ value: String?) {
            guard let value else { return }
            stream.member(name, of: object)
            stream.string(value)
        }
        func integer(_ name: String, _ value: (some BinaryInteger)?) {
            guard let value else { return }
            stream.member(name, of: object)
            stream.integer(value)
        }
        func bool(_ name: String, _ value: Bool?) {
            guard let value else { return }
            stream.member(name, of: object)
            stream.bool(value)
        }
        func value(_ name: String, _ value: (some Encodable)?) throws {
            guard let value else { return }
            stream.member(name, of: object)
            try stream.write(value)
        }
        string("kind", kind.rawValue)
        string("url", url)
        string("path", path)
        string("outputDirectory", outputDirectory)
        stream.member("headers", of: object)
        let list = stream.openContainer(UInt8(ascii: "["), UInt8(ascii: "]"))
        for header in headers {
            stream.element(of: list)
            stream.string(header)
        }
        string("sha256", sha256)
        bool("overwrite", overwrite)
        string("onExists", onExists?.rawValue)
        string("priority", priority.rawValue)
        integer("batch", batch)
        integer("limit", limit)
        integer("retries", retries)
        bool("paused", paused)
        try value("resumeData", resumeData)
        string("method", method)
        try value("form", form)
        try value("tls", tls)
        try value("network", network)
        try value("remote", remote)
        string("onComplete", onComplete)
        string("onFail", onFail)
        string("headerCommand", headerCommand)
        integer("umask", umask)
        integer("maxFilesize", maxFilesize)
        bool("retryUnsafe", retryUnsafe)
        stream.close(downTo: depth)
    }
}
