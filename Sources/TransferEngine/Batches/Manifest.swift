import FoundationEssentials

/// A manifest of `batch submit`: JSON Lines, one job a line (SPEC.md, "Batches and manifests").
/// Every line is checked before anything is queued, so a bad line is reported with its number
/// and nothing of the manifest is queued. Relative paths are taken from the current directory.
/// Thread: any.
public enum Manifest {
    public struct LineError: Error, Equatable, Sendable {
        public var line: Int
        public var message: String
    }

    /// The jobs of a manifest, in order; blank lines are skipped.
    public static func parse(_ bytes: [UInt8]) throws(LineError) -> [ManifestEntry] {
        var reader = ManifestReader(bytes)
        return try reader.next(Int.max)
    }
}

/// A manifest read a piece at a time, each line checked as it is read: `transferctl` sends the
/// daemon one chunk while it reads the next. A key is checked against every line read before it.
public struct ManifestReader {
    private let bytes: [UInt8]
    private var offset = 0
    private var number = 0
    private var keys: [String: Int] = [:]
    private let decoder = JSONTreeDecoder()
    /// Whether plain download lines are read by hand (`ManifestLine.plain`); tests compare.
    private let readsPlainLines: Bool

    public init(_ bytes: [UInt8]) {
        self.init(bytes, readsPlainLines: true)
    }

    init(_ bytes: [UInt8], readsPlainLines: Bool) {
        self.bytes = bytes
        self.readsPlainLines = readsPlainLines
    }

    /// Whether `line` is read by hand.
    static func isPlain(_ line: String) -> Bool { JSONTreeDecoder.tree(line.utf8).flatMap(ManifestLine.plain) != nil }

    /// No line but blank ones is left.
    public var isAtEnd: Bool {
        !bytes[offset...].contains { !Self.isBlank($0) && $0 != UInt8(ascii: "\n") }
    }

    /// The next `count` entries (fewer at the end), in order; blank lines are skipped.
    public mutating func next(_ count: Int) throws(Manifest.LineError) -> [ManifestEntry] {
        var entries: [ManifestEntry] = []
        while entries.count < count, offset < bytes.count {
            let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let line = bytes[offset..<end]
            offset = min(end + 1, bytes.count)
            number += 1
            guard line.contains(where: { !Self.isBlank($0) }) else { continue }
            entries.append(try entry(line))
        }
        return entries
    }

    private mutating func entry(_ line: ArraySlice<UInt8>) throws(Manifest.LineError) -> ManifestEntry {
        let entry: ManifestEntry
        do {
            // Parsed once: read by hand when plain, else through `Decodable` (from the bytes again
            // only when `JSONDecoder` must decide, which words any error).
            let tree = JSONTreeDecoder.tree(line)
            let fast = tree.flatMap { tree in
                (readsPlainLines ? ManifestLine.plain(tree) : nil) ?? JSONTreeDecoder.decodeFast(ManifestLine.self, tree: tree)
            }
            let parsed = try fast ?? decoder.decode(ManifestLine.self, from: line)
            entry = ManifestEntry(line: number, key: parsed.key, job: try parsed.job())
        } catch let error as Manifest.LineError.Reason {
            throw Manifest.LineError(line: number, message: error.message)
        } catch {
            throw Manifest.LineError(line: number, message: DecodingSummary.describe(error))
        }
        if entry.key?.isEmpty == true { throw Manifest.LineError(line: number, message: "a key must not be empty") }
        if let key = entry.key, let first = keys.updateValue(number, forKey: key) {
            throw Manifest.LineError(line: number, message: "key '\(key)' repeats line \(first)")
        }
        return entry
    }

    /// Space, tab or carriage return: what a blank line may hold.
    private static func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 13 }
}

extension Manifest.LineError {
    /// What is wrong with a line that is valid JSON.
    struct Reason: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }
}

/// One line as written: a `key` and exactly one of `download` and `upload`.
private struct ManifestLine: Decodable {
    var key: String?
    var download: DownloadLine?
    var upload: UploadLine?

    private enum CodingKeys: String, CodingKey, CaseIterable { case key, download, upload }

    init() {}

    init(from decoder: any Decoder) throws {
        try StrictKeys.check(decoder, CodingKeys.self, in: "the line")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        download = try container.decodeIfPresent(DownloadLine.self, forKey: .download)
        upload = try container.decodeIfPresent(UploadLine.self, forKey: .upload)
    }

    func job() throws -> NewJob {
        let job = switch (download, upload) {
        case (let download?, nil): try download.job()
        case (nil, let upload?): try upload.job()
        default: throw Manifest.LineError.Reason("a line needs exactly one of \"download\" and \"upload\"")
        }
        // Refused here, so that the message names the file and line before anything is queued.
        do { try JobValidation.validateURL(job.url) } catch { throw Manifest.LineError.Reason(error.message) }
        return job
    }
}

extension ManifestLine {
    /// A line that is a plain download (`key`, and `download` with only `url`, `output`,
    /// `outputDir`, `sha256`, `overwrite`, `onExists`, `compressed`, `paused`, `priority`,
    /// `retry` and `headers`, each of its JSON type or null), read from its parsed tree by
    /// hand: what `Decodable` reads of it, at a fraction of the cost (it was a third of `batch
    /// submit`'s time). nil for any other line, which `Decodable` reads (and words what is
    /// wrong with it).
    static func plain(_ tree: JSONTree) -> ManifestLine? {
        guard case .object(let members) = tree else { return nil }
        var line = ManifestLine()
        for (name, value) in members {
            switch (name, value) {
            case ("key", .string(let key)): line.key = key
            case ("key", .null): continue
            case ("download", _):
                guard let download = DownloadLine.plain(value) else { return nil }
                line.download = download
            default: return nil
            }
        }
        return line.download == nil ? nil : line
    }
}

extension DownloadLine {
    /// The `download` object of a plain line (`ManifestLine.plain`), or nil.
    static func plain(_ tree: JSONTree) -> DownloadLine? {
        guard case .object(let members) = tree else { return nil }
        var line = DownloadLine(url: "")
        var url: String?
        for (name, value) in members {
            switch (name, value) {
            case ("url", .string(let text)): url = text
            case ("output", .string(let text)): line.output = text
            case ("outputDir", .string(let text)): line.outputDir = text
            case ("sha256", .string(let text)): line.sha256 = text
            case ("overwrite", .bool(let flag)): line.overwrite = flag
            case ("compressed", .bool(let flag)): line.compressed = flag
            case ("onExists", .string(let word)):
                guard let onExists = OnExists(rawValue: word) else { return nil }
                line.onExists = onExists
            case ("paused", .bool(let flag)): line.common.paused = flag
            case ("priority", .string(let word)):
                guard let priority = Priority(rawValue: word) else { return nil }
                line.common.priority = priority
            case ("retry", .number(let text)):
                guard let retry = Int(text) else { return nil }
                line.common.retry = retry
            case ("headers", .array(let elements)):
                var headers: [String] = []
                for element in elements {
                    guard case .string(let header) = element else { return nil }
                    headers.append(header)
                }
                line.common.headers = headers
            case ("output", .null), ("outputDir", .null), ("sha256", .null), ("overwrite", .null), ("compressed", .null),
                 ("onExists", .null), ("paused", .null), ("priority", .null), ("retry", .null), ("headers", .null):
                continue
            default: return nil
            }
        }
        guard let url else { return nil }
        line.url = url
        return line
    }
}

/// What a download line and an upload line share.
private struct CommonFields: Decodable {
    var headers: [String]?
    var limitRate: RateValue?
    var priority: Priority?
    var retry: Int?
    var paused: Bool?
    var onComplete: String?
    var onFail: String?
    /// `--location-trusted`: secret headers follow a redirect to any host.
    var locationTrusted: Bool?
    /// The network options, with curl's syntax: `proxy`, `noProxy`, `connectTimeout` and
    /// `maxTime` (seconds), `user` ("USER:PASSWORD"), `netrcFile`, `ipVersion` (4 or 6), `resolve`.
    var proxy: String?
    var noProxy: String?
    var connectTimeout: SecondsValue?
    var maxTime: SecondsValue?
    var user: String?
    var netrcFile: String?
    var ipVersion: NetworkOptions.IPVersion?
    var resolve: [String]?

    /// `--header-command`.
    var headerCommand: String?
    /// S3 (`s3://BUCKET/KEY`): `--s3-endpoint`, `--region`, `--profile`.
    var s3Endpoint: String?
    var region: String?
    var profile: String?

    static let keys: Set<String> = ["headers", "limitRate", "priority", "retry", "paused", "onComplete", "onFail",
                                    "locationTrusted", "proxy", "noProxy", "connectTimeout", "maxTime", "user",
                                    "netrcFile", "ipVersion", "resolve", "headerCommand", "s3Endpoint", "region",
                                    "profile"]

    var tls: TLSOptions? { locationTrusted == true ? TLSOptions(locationTrusted: true) : nil }

    /// The line's protocol for `url` (an upload's `tus` and `chunkSize` with it).
    func remote(for url: String, tus: Bool = false, chunkSize: SizeValue? = nil, partsInFlight: Int? = nil) throws -> RemoteOptions? {
        do {
            return try RemoteOptions.chosen(for: url, tus: tus, endpoint: s3Endpoint, region: region, profile: profile,
                                            chunkSize: chunkSize?.bytes, partsInFlight: partsInFlight)
        } catch {
            throw Manifest.LineError.Reason(error.message)
        }
    }

    /// The network options of the line (`compressed`: a download's), checked as the command line
    /// checks them; nil when it gives none.
    func network(compressed: Bool = false) throws -> NetworkOptions? {
        var network = NetworkOptions()
        do {
            network.proxy = proxy.map(NetworkOptions.proxyURL)
            network.noProxy = noProxy
            network.connectTimeout = try connectTimeout?.seconds(.connectTimeout)
            network.maxTime = try maxTime?.seconds(.maxTime)
            if let user { (network.user, network.password) = try NetworkOptions.credentials(user) }
            network.netrcFile = netrcFile.map(StatePaths.absolute)
            network.ipVersion = ipVersion
            network.resolve = try (resolve ?? []).map { entry throws(NetworkOptionError) in try NetworkOptions.resolveEntry(entry) }
            network.compressed = compressed
            try network.check()
        } catch {
            throw Manifest.LineError.Reason(error.message(naming: error.field.rawValue))
        }
        return network.isDefault ? nil : network
    }

    /// `retry`, within `NumericLimits.retries`.
    func retries() throws -> Int? {
        do {
            return try retry.map { (retry) throws(OutOfRange) in try NumericLimits.retries.check(retry, "retry") }
        } catch {
            throw Manifest.LineError.Reason(error.message)
        }
    }
}

private struct DownloadLine: Decodable {
    var url: String
    /// The file, or (`outputDir`) the directory it is saved in, named by the server.
    var output: String?
    var outputDir: String?
    var sha256: String?
    var overwrite: Bool?
    var onExists: OnExists?
    var maxFilesize: SizeValue?
    var compressed: Bool?
    var common: CommonFields

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case url, output, outputDir, sha256, overwrite, onExists, maxFilesize, compressed
    }

    init(url: String) {
        self.url = url
        common = CommonFields()
    }

    init(from decoder: any Decoder) throws {
        let hasCommon = try StrictKeys.check(decoder, CodingKeys.self, plus: CommonFields.keys, in: "download")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        output = try container.decodeIfPresent(String.self, forKey: .output)
        outputDir = try container.decodeIfPresent(String.self, forKey: .outputDir)
        onExists = try container.decodeIfPresent(OnExists.self, forKey: .onExists)
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        overwrite = try container.decodeIfPresent(Bool.self, forKey: .overwrite)
        maxFilesize = try container.decodeIfPresent(SizeValue.self, forKey: .maxFilesize)
        compressed = try container.decodeIfPresent(Bool.self, forKey: .compressed)
        common = hasCommon ? try CommonFields(from: decoder) : CommonFields()
    }

    func job() throws -> NewJob {
        var path: String?
        var directory: String?
        switch (output, outputDir) {
        case (let output?, nil):
            guard !output.isEmpty, !output.hasSuffix("/") else {
                throw Manifest.LineError.Reason("\"output\" must name a file, got '\(output)' (a directory goes in \"outputDir\")")
            }
            path = StatePaths.absolute(output)
        case (nil, let outputDir?):
            guard !outputDir.isEmpty else { throw Manifest.LineError.Reason("\"outputDir\" must name a directory") }
            directory = StatePaths.absolute(outputDir)
        case (nil, nil):
            throw Manifest.LineError.Reason("missing field 'download.output' (a file; or 'download.outputDir', a directory)")
        case (_?, _?):
            throw Manifest.LineError.Reason("a download has \"output\" (a file) or \"outputDir\" (a directory), not both")
        }
        var job = NewJob(kind: .download, url: url, path: path, headers: common.headers ?? [],
                         sha256: sha256?.lowercased(), overwrite: overwrite ?? false, priority: common.priority ?? .normal,
                         limit: common.limitRate?.bytesPerSecond, retries: try common.retries(), paused: common.paused ?? false,
                         tls: common.tls, network: try common.network(compressed: compressed ?? false),
                         onComplete: common.onComplete, onFail: common.onFail, headerCommand: common.headerCommand)
        job.maxFilesize = maxFilesize?.bytes
        job.remote = try common.remote(for: url)
        job.outputDirectory = directory
        job.onExists = onExists
        return job
    }
}

private struct UploadLine: Decodable {
    var url: String
    var form: [String]?
    var file: String?
    var method: String?
    var retryUnsafe: Bool?
    /// A tus upload (`--tus`), and its chunks' (or an S3 upload's parts') size.
    var tus: Bool?
    var chunkSize: SizeValue?
    var partsInFlight: Int?
    var common: CommonFields

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case url, form, file, method, retryUnsafe, tus, chunkSize, partsInFlight
    }

    init(from decoder: any Decoder) throws {
        let hasCommon = try StrictKeys.check(decoder, CodingKeys.self, plus: CommonFields.keys, in: "upload")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        form = try container.decodeIfPresent([String].self, forKey: .form)
        file = try container.decodeIfPresent(String.self, forKey: .file)
        method = try container.decodeIfPresent(String.self, forKey: .method)
        retryUnsafe = try container.decodeIfPresent(Bool.self, forKey: .retryUnsafe)
        tus = try container.decodeIfPresent(Bool.self, forKey: .tus)
        chunkSize = try container.decodeIfPresent(SizeValue.self, forKey: .chunkSize)
        partsInFlight = try container.decodeIfPresent(Int.self, forKey: .partsInFlight)
        common = hasCommon ? try CommonFields(from: decoder) : CommonFields()
    }

    func job() throws -> NewJob {
        guard (form?.isEmpty ?? true) != (file == nil) else {
            throw Manifest.LineError.Reason("an upload needs \"form\" or \"file\", not both and not neither")
        }
        var fields: [FormField] = []
        for text in form ?? [] {
            do {
                var field = try FormField.parse(text)
                field.file = field.file.map(StatePaths.absolute)
                fields.append(field)
            } catch {
                throw Manifest.LineError.Reason(error.message)
            }
        }
        var job = NewJob(kind: .upload, url: url, path: file.map(StatePaths.absolute), headers: common.headers ?? [],
                      priority: common.priority ?? .normal, limit: common.limitRate?.bytesPerSecond,
                      retries: try common.retries(), paused: common.paused ?? false, method: method?.uppercased(),
                      form: fields.isEmpty ? nil : fields, tls: common.tls, network: try common.network(),
                      onComplete: common.onComplete, onFail: common.onFail, retryUnsafe: retryUnsafe,
                      headerCommand: common.headerCommand)
        job.remote = try common.remote(for: url, tus: tus ?? false, chunkSize: chunkSize, partsInFlight: partsInFlight)
        return job
    }
}

/// A rate as a number of bytes per second (0: unlimited) or a string such as "512K", within
/// `NumericLimits.rate` either way.
private struct RateValue: Decodable {
    var bytesPerSecond: Int64?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            do {
                bytesPerSecond = number == 0 ? nil : try NumericLimits.rate.check(number, "limitRate")
            } catch {
                throw Manifest.LineError.Reason("limitRate must be 0 (unlimited) or a whole number \(error.limit), got \(error.value)")
            }
            return
        }
        do {
            bytesPerSecond = try Rate.parse(try container.decode(String.self))
        } catch let error as Rate.ParseError {
            throw Manifest.LineError.Reason("limitRate: \(error.message)")
        }
    }
}

/// Seconds as a number (`2.5`) or a string as curl takes them (`"2.5"`).
private struct SecondsValue: Decodable {
    var number: Double?
    var text: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self.number = number
        } else {
            text = try container.decode(String.self)
        }
    }

    func seconds(_ field: NetworkOptions.Field) throws(NetworkOptionError) -> Double {
        if let text { return try NetworkOptions.seconds(text, field) }
        let seconds = number ?? 0
        try NetworkOptions.checkSeconds(seconds, field)
        return seconds
    }
}

/// A size as a number of bytes or a string such as "10G".
private struct SizeValue: Decodable {
    var bytes: Int64

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            guard number >= 0 else { throw Manifest.LineError.Reason("maxFilesize: must be 0 or more, got \(number)") }
            bytes = number
            return
        }
        do {
            bytes = try ByteCount.parse(try container.decode(String.self))
        } catch let error as ByteCount.ParseError {
            throw Manifest.LineError.Reason("maxFilesize: \(error.message)")
        }
    }
}

/// Refuses fields nobody reads (a misspelt "sha265" must not be ignored silently).
private enum StrictKeys {
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Whether any of the object's fields is one of `extra` (all are `Keys` or `extra`).
    @discardableResult
    static func check<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, _ keys: Keys.Type,
                                                       plus extra: Set<String> = [], in object: String) throws -> Bool {
        var hasExtra = false
        func check(_ name: String) throws {
            guard Keys(stringValue: name) == nil else { return }
            guard extra.contains(name) else { throw Manifest.LineError.Reason("unknown field '\(name)' in \(object)") }
            hasExtra = true
        }
        // The members' names straight from the tree: a container of `AnyKey`s and its `allKeys`
        // were a sixth of `batch submit`'s time reading a manifest.
        if let tree = decoder as? JSONTreeValueDecoder, case .object(let members) = tree.tree {
            for member in members { try check(member.key) }
        } else {
            for key in try decoder.container(keyedBy: AnyKey.self).allKeys { try check(key.stringValue) }
        }
        return hasExtra
    }
}
