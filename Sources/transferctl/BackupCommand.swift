import TransferEngine

/// `transferctl backup DIR --to URL_PREFIX`: one batch with an upload per changed file.
struct BackupCommand: Subcommand {
    static let help = """
        usage: transferctl backup DIR --to URL_PREFIX [options]

        Queues one upload per regular file under DIR as one batch and prints its id. With
        PUT (the default) each file goes to URL_PREFIX/RELATIVE/PATH (percent-encoded),
        after the daemon has made URL_PREFIX and each directory with WebDAV's MKCOL (once
        per backup; an existing one is fine, the parent of URL_PREFIX must exist); with
        POST each file is posted to URL_PREFIX as a form with the part 'file' and the
        field 'path' (its relative path), plus any -F fields. A file is skipped when it is
        unchanged since it was last uploaded completely from DIR to the same URL_PREFIX
        (same size and modification time; same sha256 with --checksum), or is already
        queued. A backup that was interrupted continues where it was; run it again at any
        time to send only what changed.

        options:
          --to URL_PREFIX         where the files go (required): an http(s) URL (WebDAV or a
                                  form endpoint), s3://BUCKET/PREFIX (each file to the key
                                  PREFIX/RELATIVE/PATH, resumable) or tus+https://HOST/PATH (each
                                  file created at that tus endpoint, its relative path as its
                                  filename, resumable)
          --tus                   URL_PREFIX is a tus endpoint (the same as tus+https://…)
          --s3-endpoint URL, --region R, --profile P, --chunk-size SIZE, --parts-in-flight N
                                  as for upload
          --method M              PUT (default) or POST
          -F, --form 'NAME=VALUE' an extra form field with POST (repeatable)
          --checksum              compare contents (sha256), not size and time
          --follow-symlinks       upload the files symlinks point to (default: skip symlinks)
          --exclude GLOB          leave out what GLOB matches (repeatable; see filters)
          --include GLOB          keep what GLOB matches, whatever a later rule says (repeatable)
          --exclude-from FILE     --exclude each line of FILE (blank lines and lines
                                  starting with # are not rules)
          --dry-run               print what would be sent or skipped and why, one line a
                                  file (--json: {"path", "action", "reason"} a line), and
                                  queue nothing
          --name NAME             the batch's name (default: backup DIR)
          --on-complete CMD, --on-fail CMD
                                  run CMD when the batch has ended (see transferctl batch --help)
          -H, --header, --header-command, --limit-rate, --priority, --retry, --cacert, --pinned-pubkey,
          --cert, --key, -k, --insecure, --allow-insecure-redirect, --location-trusted,
          -x, --proxy, --noproxy, --connect-timeout, -m, --max-time, -u, --user, -n,
          --netrc, --netrc-file, -4, --ipv4, -6, --ipv6, --resolve
                                  as for upload, applied to every file and MKCOL (--batch
                                  does not apply: a backup makes its own batch)

        filters (rsync's rules): each file and directory, by its path relative to DIR, is
        tested against the --include/--exclude/--exclude-from rules in the order given, and
        the first that matches decides; what no rule matches is backed up. '*' matches within
        a name, '**' across '/', '?' one character, '[a-z]' '[!a-z]' one of (or not of) a
        class, '\\' escapes. A pattern starting with '/' is anchored at DIR; any other matches
        the end of the path ('*.tmp' and 'b/x.tmp' both match 'a/b/x.tmp'). A trailing '/'
        matches directories only. An excluded directory is not read at all. Directories are
        tested too, so --include '*.jpg' --exclude '*' leaves out every subdirectory: put
        --include '*/' first to walk them all.

        examples:
          transferctl backup ~/photos --to https://dav.example.com/backup/photos
          transferctl backup ~/photos --to https://dav.example.com/backup/photos \\
              --exclude '*.tmp' --exclude 'cache/' --dry-run
          transferctl backup ~/src --to https://dav.example.com/src \\
              --include '*/' --include '*.swift' --exclude '*'
          transferctl backup /srv/data --to https://api.example.com/ingest --method POST -F owner=ops
        """

    var directory: String
    var prefix: String
    /// A backup to a tus endpoint or an S3 prefix (nil: WebDAV or a form POST).
    var remote: RemoteOptions?
    var method: String
    var fields: [FormField]
    var checksum: Bool
    var followSymlinks: Bool
    var filters: FilterRules
    var dryRun: Bool
    var common: CommonJobOptions
    var template: BatchSubmission

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> BackupCommand {
        let filters = try filterRules(&arguments)  // first: a pattern may look like an option
        let dryRun = arguments.flag("--dry-run")
        // --to is required, but refused missing only once every option has been asked for:
        // those are the options backup knows (OptionCatalog), and a mistyped one is matched
        // against them.
        let target = try arguments.option("--to")
        let method = (try arguments.option("--method"))?.uppercased() ?? "PUT"
        guard method == "PUT" || method == "POST" else { throw UsageError("--method must be PUT or POST, got '\(method)'") }
        var fields: [FormField] = []
        for text in try arguments.options("-F", "--form") {
            let field: FormField
            do { field = try FormField.parse(text) } catch { throw UsageError(error.message) }
            guard field.file == nil else { throw UsageError("-F '\(text)': backup sends the files itself; give NAME=VALUE fields") }
            fields.append(field)
        }
        if method == "PUT", !fields.isEmpty { throw UsageError("-F fields go with --method POST") }
        let checksum = arguments.flag("--checksum")
        let followSymlinks = arguments.flag("--follow-symlinks")
        let batchName = try arguments.option("--name")
        var template = BatchSubmission(token: "", final: true, entries: [])
        template.onComplete = try arguments.option("--on-complete")
        template.onFail = try arguments.option("--on-fail")
        let common = try CommonJobOptions.parse(&arguments)
        let remoteArguments = try RemoteArguments.parse(&arguments, upload: true)
        guard common.batch == nil else { throw UsageError("backup creates its own batch; --batch does not apply") }
        let positionals = try arguments.positionals()
        guard var prefix = target else { throw UsageError("backup needs --to URL_PREFIX") }
        // `tus+https://…`: every file is created at that tus endpoint, named by its relative path.
        var remoteArgs = remoteArguments
        if prefix.lowercased().hasPrefix("tus+") {
            prefix.removeFirst(4)
            remoteArgs.tus = true
        }
        let remote = try remoteArgs.options(for: prefix)
        if remote != nil, method != "PUT" || !fields.isEmpty {
            throw UsageError("a tus or S3 backup sends each file whole: --method POST and -F do not apply")
        }
        guard positionals.count == 1, let given = positionals.first else { throw UsageError("backup takes one directory") }
        var directory = StatePaths.absolute(given)
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        template.name = batchName ?? "backup \(directory)"
        template.backup = BackupTarget(directory: directory, prefix: prefix)
        template.checksum = checksum
        return BackupCommand(directory: directory, prefix: prefix, remote: remote, method: method, fields: fields, checksum: checksum,
                             followSymlinks: followSymlinks, filters: filters, dryRun: dryRun, common: common,
                             template: template)
    }

    /// `--include`, `--exclude` and `--exclude-from` in the order given, as one list of rules.
    private static func filterRules(_ arguments: inout ArgumentList) throws -> FilterRules {
        var rules: [FilterRule] = []
        for (option, value) in try arguments.interleavedOptions("--include", "--exclude", "--exclude-from") {
            do {
                switch option {
                case "--include": rules.append(try FilterRule(.include, value, origin: option))
                case "--exclude": rules.append(try FilterRule(.exclude, value, origin: option))
                default:
                    guard let bytes = FileReader.contents(of: value, limit: 16 << 20) else {
                        throw UsageError("--exclude-from: cannot read \(value)")
                    }
                    rules += try FilterRules.excludeFile(RawPath.string(fromBytes: bytes), named: value)
                }
            } catch let error as GlobSyntaxError {
                throw UsageError(error.message)
            }
        }
        return FilterRules(rules)
    }

    func run(_ context: Context) throws -> ExitStatus {
        var scan = DirectoryScan(followSymlinks: followSymlinks, filters: filters)
        let scanned = try scan.entries(under: directory)
        let files = scanned.filter { $0.excludedBy == nil }
        var entries: [ManifestEntry] = []
        entries.reserveCapacity(files.count)
        for (index, file) in files.enumerated() {
            let relativePath = file.relativePath
            let path = file.target ?? directory + "/" + relativePath
            let job: NewJob
            if let remote {
                // tus: one endpoint, the relative path in the upload's metadata (the job's key).
                // S3: the key under the prefix, as written (S3Location encodes it for requests).
                let url = remote.kind == .tus ? prefix : (prefix.hasSuffix("/") ? prefix : prefix + "/") + relativePath
                job = upload(url: url, path: path, form: nil, remote: remote)
            } else if method == "PUT" {
                job = upload(url: WebDAVLayout.url(of: relativePath, under: prefix), path: path, form: nil)
            } else {
                let form = fields + [FormField(name: "path", value: relativePath),
                                     FormField(name: "file", file: path, filename: relativePath.split(separator: "/").last.map(String.init))]
                job = upload(url: prefix, path: nil, form: form)
            }
            entries.append(ManifestEntry(line: index + 1, key: relativePath, job: job, relativePath: relativePath,
                                         sha256: checksum ? try DirectoryScan.sha256(of: path) : nil))
        }
        if dryRun {
            BackupDryRun(scanned, decisions: try BatchSender.plan(entries, as: template, context: context))
                .print(json: context.json)
            return .success
        }
        BatchSender.report(try BatchSender.send(EntrySource(entries), as: template, context: context), context: context)
        return .success
    }

    private func upload(url: String, path: String?, form: [FormField]?, remote: RemoteOptions? = nil) -> NewJob {
        var job = NewJob(kind: .upload, url: url, path: path, headers: common.headers, priority: common.priority,
                         limit: common.limit, retries: common.retries, method: remote == nil ? method : nil, form: form,
                         tls: common.tls, network: common.network, onComplete: common.onComplete, onFail: common.onFail,
                         headerCommand: common.headerCommand)
        job.remote = remote
        return job
    }
}
