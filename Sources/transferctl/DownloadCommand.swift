import FoundationEssentials
import TransferEngine

/// `transferctl download URL -o PATH [options]`: queue a download, print its id.
struct DownloadCommand: Subcommand {
    static let help = """
        usage: transferctl download URL -o PATH|-o DIR/|-O [options]
               transferctl download --resume-data FILE [-o PATH] [options]

        Queues a download and prints the new job's id. The file appears at PATH only once
        it is complete (and verified with --sha256). Into a directory (-o DIR/ with a
        trailing slash, -o naming an existing directory, or -O for the current one) the file
        is named from the server's answer: its Content-Disposition filename, else the last
        segment of the final URL, made safe (no '/', '..', control characters or leading
        dots); show tells the name once the answer has come.

        options:
          -o, --output PATH|DIR/  destination file, or the directory to save it in
          -O, --remote-name       save it in the current directory, named by the server
          --on-exists WHAT        when the destination exists: fail (default), overwrite, or
                                  rename (to 'name (1).ext', 'name (2).ext', ...)
          -H, --header 'N: v'     extra request header (repeatable); -H @FILE reads them from FILE
          --header-command CMD    run CMD (with /bin/sh) before each attempt; each line it prints
                                  ('Name: value') is added to that attempt's request (a secret);
                                  a 401 or 403 runs it again and retries once
          --cacert FILE           trust this CA bundle (PEM) for https
          --pinned-pubkey PIN     require the server key 'sha256//BASE64'
          --cert FILE --key FILE  client certificate and key (PEM)
          -k, --insecure          do not verify the server (shown by show, logged)
          --allow-insecure-redirect  follow a redirect from https to http
          --location-trusted      send secret headers (Authorization, Cookie, X-Api-Key, ...)
                                  and --user's credentials to any host a redirect leads to
                                  (default: only to the URL's)
          -x, --proxy URL         use this proxy for every host but --noproxy's (http://, https://,
                                  socks5h://, ...; '' for none); default: the daemon's http_proxy,
                                  https_proxy and no_proxy
          --noproxy LIST          hosts reached without the proxy (comma-separated; '*' for all)
          --connect-timeout S     give up connecting after S seconds (fractions allowed; default 30)
          -m, --max-time S        fail an attempt that takes longer than S seconds (timed_out, not
                                  retried)
          --compressed            ask for a compressed body (gzip, deflate, br, zstd) and store it
                                  decoded; an interrupted compressed download starts over at byte 0
          -u, --user USER:PASS    credentials for Basic or Digest, whichever the server asks for
                                  (curl's anyauth negotiation); the password is never shown
          -n, --netrc             take credentials from your ~/.netrc (read by the daemon)
          --netrc-file FILE       take credentials from FILE (the daemon must be able to read it)
          -4, --ipv4              connect over IPv4 only
          -6, --ipv6              connect over IPv6 only
          --resolve HOST:PORT:ADDR[,ADDR]
                                  connect to ADDR for HOST:PORT (repeatable; as curl's --resolve)
          --sha256 HEX            verify the finished file before it appears
          --overwrite             replace an existing destination (--on-exists overwrite)
          --max-filesize SIZE     fail (too_large) and remove the partial file past SIZE, e.g. 10G
          --resume-data FILE      continue from resume data exported by 'resume-data ID'
          --limit-rate RATE       this job's bandwidth, e.g. 512K, 4M
          --priority P            high, normal or low (default normal)
          --retry N               retries after a failed attempt (default 7)
          --batch B               add to batch B (see transferctl batch --help)
          --paused                create the job paused
          --on-complete CMD       run CMD (with /bin/sh) when the job completes; TRANSFERD_JOB_ID,
                                  TRANSFERD_STATE, TRANSFERD_PATH, TRANSFERD_URL, ... are set
          --on-fail CMD           run CMD when the job fails (TRANSFERD_ERROR says why)

          --s3-endpoint URL, --region R, --profile P
                                  for an s3://BUCKET/KEY URL: the object is read from S3 (or the
                                  S3-compatible store at URL), signed with the daemon's AWS
                                  credentials, and resumes with Range and its ETag as any download

        examples:
          transferctl download https://example.com/big.iso -o ~/big.iso
          transferctl download https://example.com/a.tar --sha256 9f86d0... -o /data/a.tar
          transferctl download 'https://example.com/get?id=7' -o ~/Downloads/ --on-exists rename
        """

    var job: NewJob

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> DownloadCommand {
        let output = try arguments.option("-o", "--output")
        let remoteName = arguments.flag("-O", "--remote-name")
        var onExists: OnExists?
        if let text = try arguments.option("--on-exists") {
            guard let value = OnExists(rawValue: text) else {
                throw UsageError("--on-exists must be fail, overwrite or rename, got '\(text)'")
            }
            onExists = value
        }
        let sha256 = try arguments.option("--sha256")
        let overwrite = arguments.flag("--overwrite")
        let resumeFile = try arguments.option("--resume-data")
        let paused = arguments.flag("--paused")
        let compressed = arguments.flag("--compressed")
        var maxFilesize: Int64?
        if let text = try arguments.option("--max-filesize") {
            do { maxFilesize = try ByteCount.parse(text) } catch { throw UsageError("--max-filesize: \(error.message)") }
        }
        let common = try CommonJobOptions.parse(&arguments, compressed: compressed)
        let remoteArguments = try RemoteArguments.parse(&arguments, upload: false)
        let positionals = try arguments.positionals()
        guard positionals.count <= 1 else { throw UsageError("download takes one URL, got \(positionals.count)") }

        var resumeData: ResumeData?
        if let resumeFile {
            resumeData = try ResumeDataFile.read(resumeFile)
        }
        guard let given = positionals.first ?? resumeData?.url else {
            throw UsageError("download needs a URL (see transferctl download --help)")
        }
        let (url, guessed) = DefaultScheme.apply(given)
        if let guessed { Context.note(guessed) }
        guard !(remoteName && output != nil) else { throw UsageError("give -o or -O, not both") }
        // Into a directory: -O, -o DIR/ (a trailing slash), or -o naming an existing directory.
        var directory: String?
        if remoteName {
            directory = StatePaths.absolute(".")
        } else if let output, output.hasSuffix("/") || PartialFile.existing(at: StatePaths.absolute(output))?.isDirectory == true {
            directory = StatePaths.absolute(output)
        }
        let path: String?
        if directory != nil {
            guard resumeData == nil else { throw UsageError("resume data names its file: give -o PATH, not a directory") }
            path = nil
        } else {
            guard let given = output ?? resumeData?.path else {
                throw UsageError("download needs a destination: -o PATH, -o DIR/ or -O")
            }
            path = StatePaths.absolute(given)
        }
        // Exported resume data carries the non-secret headers; -H replaces them.
        let requestHeaders = common.headers.isEmpty ? resumeData?.headers ?? [] : common.headers
        var job = NewJob(kind: .download, url: url, path: path, headers: requestHeaders,
                         sha256: sha256?.lowercased(), overwrite: overwrite, priority: common.priority,
                         batch: common.batch, limit: common.limit, retries: common.retries, paused: paused,
                         resumeData: resumeData, tls: common.tls, network: common.network, onComplete: common.onComplete,
                         onFail: common.onFail, headerCommand: common.headerCommand)
        job.umask = ProcessIdentity.umask
        job.remote = try remoteArguments.options(for: url)
        job.maxFilesize = maxFilesize
        job.outputDirectory = directory
        job.onExists = onExists
        return DownloadCommand(job: job)
    }

    func run(_ context: Context) throws -> ExitStatus {
        try context.queue(job)
    }
}

/// Options every job-creating command takes.
struct CommonJobOptions {
    var priority = Priority.normal
    var batch: Int64?
    var limit: Int64?
    var retries: Int?
    var headers: [String] = []
    var tls: TLSOptions?
    var network: NetworkOptions?
    var onComplete: String?
    var onFail: String?
    var headerCommand: String?

    /// `compressed`: `download --compressed` (the one network option only downloads take).
    static func parse(_ arguments: inout ArgumentList, compressed: Bool = false) throws -> CommonJobOptions {
        var options = CommonJobOptions()
        options.onComplete = try arguments.option("--on-complete")
        options.onFail = try arguments.option("--on-fail")
        options.headerCommand = try arguments.option("--header-command")
        // -H 'Name: value', or -H @FILE with one header a line (keeps secrets out of shell history).
        for header in try arguments.options("-H", "--header") {
            guard header.hasPrefix("@") else {
                options.headers.append(header)
                continue
            }
            let path = String(header.dropFirst())
            guard let bytes = FileReader.contents(of: path, limit: 1 << 20) else {
                throw UsageError("cannot read headers from \(path)")
            }
            options.headers += String(decoding: bytes, as: UTF8.self)
                .split(whereSeparator: { $0 == "\n" || $0 == "\r\n" })
                .map { String($0).droppingCarriageReturn }
                .filter { !$0.isEmpty }
        }
        var tls = TLSOptions()
        tls.cacert = try arguments.option("--cacert").map(readableFile)
        tls.pinnedPublicKey = try arguments.option("--pinned-pubkey")
        tls.cert = try arguments.option("--cert").map(readableFile)
        tls.key = try arguments.option("--key").map(readableFile)
        tls.insecure = arguments.flag("-k", "--insecure")
        tls.allowInsecureRedirect = arguments.flag("--allow-insecure-redirect")
        tls.locationTrusted = arguments.flag("--location-trusted")
        if let pin = tls.pinnedPublicKey, !pin.hasPrefix("sha256//") {
            throw UsageError("--pinned-pubkey takes 'sha256//BASE64' (the base64 sha256 of the server's public key)")
        }
        if (tls.cert == nil) != (tls.key == nil), tls.key != nil {
            throw UsageError("--key goes with --cert")
        }
        options.tls = tls.isDefault ? nil : tls
        options.network = try NetworkArguments.parse(&arguments, compressed: compressed)
        if let text = try arguments.option("--priority") {
            guard let priority = Priority(rawValue: text) else {
                throw UsageError("--priority must be high, normal or low, got '\(text)'")
            }
            options.priority = priority
        }
        options.batch = try arguments.batch()
        if let text = try arguments.option("--limit-rate") {
            do { options.limit = try Rate.parse(text) } catch { throw UsageError(error.message) }
        }
        options.retries = try arguments.number("--retry", NumericLimits.retries)
        return options
    }

    /// An absolute path to a file the daemon will read, refused now when it cannot be read.
    static func readableFile(_ path: String) throws -> String {
        let absolute = StatePaths.absolute(path)
        guard FileReader.contents(of: absolute, limit: 16 << 20) != nil else {
            throw UsageError("cannot read \(absolute)")
        }
        return absolute
    }
}

extension String {
    var droppingCarriageReturn: String { hasSuffix("\r") ? String(dropLast()) : self }
}

/// Reads an exported resume-data document.
enum ResumeDataFile {
    static func read(_ path: String) throws -> ResumeData {
        guard let bytes = FileReader.contents(of: path) else {
            throw UsageError("cannot read resume data from \(path)")
        }
        let data: ResumeData
        do {
            data = try JSONDecoder().decode(ResumeData.self, from: Data(bytes))
        } catch {
            throw UsageError("\(path) is not resume data: \(DecodingSummary.describe(error))")
        }
        do { try data.checkNumbers() } catch { throw UsageError("invalid resume data in \(path): \(error.message)") }
        return data
    }
}
