import TransferEngine

/// The options that send a job through a resumable protocol: `--tus` and `--chunk-size`
/// (uploads), and for an `s3://BUCKET/KEY` URL `--s3-endpoint`, `--region`, `--profile`.
struct RemoteArguments {
    var tus = false
    var endpoint: String?
    var region: String?
    var profile: String?
    var chunk: Int64?
    var partsInFlight: Int?

    /// Reads the options; `upload`: the command is an upload (`--tus`, `--chunk-size`).
    static func parse(_ arguments: inout ArgumentList, upload: Bool) throws -> RemoteArguments {
        var options = RemoteArguments()
        if upload {
            options.tus = arguments.flag("--tus")
            options.partsInFlight = try arguments.number("--parts-in-flight", NumericLimits.retries)
            if let text = try arguments.option("--chunk-size") {
                do { options.chunk = try ByteCount.parse(text) } catch { throw UsageError("--chunk-size: \(error.message)") }
            }
        }
        options.endpoint = try arguments.option("--s3-endpoint")
        options.region = try arguments.option("--region")
        options.profile = try arguments.option("--profile")
        return options
    }

    /// The job's protocol settings for `url` (nil: plain HTTP).
    func options(for url: String) throws -> RemoteOptions? {
        do {
            return try RemoteOptions.chosen(for: url, tus: tus, endpoint: endpoint, region: region, profile: profile,
                                            chunkSize: chunk, partsInFlight: partsInFlight)
        } catch {
            throw UsageError(error.message)
        }
    }
}
