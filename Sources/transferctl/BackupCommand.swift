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
          --to URL_PREFIX         where the files go (required)
          --method M              PUT (default) or POST
          -F, --form 'NAME=VALUE' an extra form field with POST (repeatable)
          --checksum              compare contents (sha256), not size and time
          --follow-symlinks       upload the files symlinks point to (default: skip symlinks)
          --name NAME             the batch's name (default: backup DIR)
          --on-complete CMD, --on-fail CMD
                                  run CMD when the batch has ended (see transferctl batch --help)
          -H, --header, --limit-rate, --priority, --retry, --cacert, --pinned-pubkey,
          --cert, --key, -k, --insecure, --allow-insecure-redirect, --location-trusted
                                  as for upload, applied to every file (--batch does not
                                  apply: a backup makes its own batch)

        examples:
          transferctl backup ~/photos --to https://dav.example.com/backup/photos
          transferctl backup /srv/data --to https://api.example.com/ingest --method POST -F owner=ops
        """

    var directory: String
    var prefix: String
    var method: String
    var fields: [FormField]
    var checksum: Bool
    var followSymlinks: Bool
    var common: CommonJobOptions
    var template: BatchSubmission

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> BackupCommand {
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
        guard common.batch == nil else { throw UsageError("backup creates its own batch; --batch does not apply") }
        let positionals = try arguments.positionals()
        guard let prefix = target else { throw UsageError("backup needs --to URL_PREFIX") }
        guard positionals.count == 1, let given = positionals.first else { throw UsageError("backup takes one directory") }
        var directory = StatePaths.absolute(given)
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        template.name = batchName ?? "backup \(directory)"
        template.backup = BackupTarget(directory: directory, prefix: prefix)
        template.checksum = checksum
        return BackupCommand(directory: directory, prefix: prefix, method: method, fields: fields, checksum: checksum,
                             followSymlinks: followSymlinks, common: common, template: template)
    }

    func run(_ context: Context) throws -> ExitStatus {
        var scan = DirectoryScan(followSymlinks: followSymlinks)
        let files = try scan.files(under: directory)
        var entries: [ManifestEntry] = []
        entries.reserveCapacity(files.count)
        for (index, relativePath) in files.enumerated() {
            let path = directory + "/" + relativePath
            let job: NewJob
            if method == "PUT" {
                job = upload(url: WebDAVLayout.url(of: relativePath, under: prefix), path: path, form: nil)
            } else {
                let form = fields + [FormField(name: "path", value: relativePath),
                                     FormField(name: "file", file: path, filename: relativePath.split(separator: "/").last.map(String.init))]
                job = upload(url: prefix, path: nil, form: form)
            }
            entries.append(ManifestEntry(line: index + 1, key: relativePath, job: job, relativePath: relativePath,
                                         sha256: checksum ? try DirectoryScan.sha256(of: path) : nil))
        }
        BatchSender.report(try BatchSender.send(entries, as: template, context: context), context: context)
        return .success
    }

    private func upload(url: String, path: String?, form: [FormField]?) -> NewJob {
        NewJob(kind: .upload, url: url, path: path, headers: common.headers, priority: common.priority,
               limit: common.limit, retries: common.retries, method: method, form: form, tls: common.tls,
               onComplete: common.onComplete, onFail: common.onFail)
    }
}
