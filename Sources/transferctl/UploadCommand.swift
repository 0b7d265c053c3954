import TransferEngine

/// `transferctl upload URL -F ... | -T FILE`: queue an upload streamed from disk.
struct UploadCommand: Subcommand {
    static let help = """
        usage: transferctl upload URL -F 'NAME=VALUE' -F 'NAME=@FILE[;type=MIME][;filename=NAME]' ... [options]
               transferctl upload URL -T FILE [options]

        Queues an upload and prints the new job's id. -F sends a multipart/form-data body
        (curl's syntax; quote a file or filename holding ';' or '"': -F 'f=@"a;b.txt"');
        -T sends FILE as the raw body. Files are read from disk as they are sent, never
        whole; if one changes after queueing, the job fails with source_changed. After a
        pause or an interruption an upload sends its body again from the first byte.
        Every attempt of a POST carries the job's Idempotency-Key header (unless -H gives
        one), and a POST is retried only when the server cannot have acted on it.

        options:
          -F, --form PART         a form part (repeatable)
          -T, --upload-file FILE  send FILE as the body
          --method M              POST or PUT (default: POST with -F, PUT with -T)
          -H, --header 'N: v'     extra request header (repeatable); -H @FILE reads them from FILE
          --header-command CMD    run CMD (with /bin/sh) before each attempt; each line it prints
                                  ('Name: value') is added to that attempt's request (a secret);
                                  a 401 or 403 runs it again and retries once
          --cacert, --pinned-pubkey, --cert, --key, -k/--insecure, --allow-insecure-redirect,
          --location-trusted      as for download (an upload follows no redirect)
          -x/--proxy, --noproxy, --connect-timeout, -m/--max-time, -u/--user, -n/--netrc,
          --netrc-file, -4/--ipv4, -6/--ipv6, --resolve
                                  as for download (with --user the body may be sent twice: once
                                  to learn the server's method, once with the credentials)
          --limit-rate RATE       this job's bandwidth, e.g. 512K, 4M
          --priority P            high, normal or low (default normal)
          --retry N               retries after a failed attempt (default 7)
          --retry-unsafe          retry a POST even when the server may have acted on it (a lost
                                  answer, HTTP 500/502/504 after the whole body was sent)
          --batch B               add to batch B (see transferctl batch --help)
          --paused                create the job paused
          --on-complete CMD       run CMD (with /bin/sh) when the upload completes
          --on-fail CMD           run CMD when it fails

        examples:
          transferctl upload https://api.example.com/photos -F title=Holiday -F photo=@beach.jpg
          transferctl upload https://dav.example.com/backup/db.dump -T db.dump
        """

    var job: NewJob

    static func parse(name: String, _ arguments: inout ArgumentList) throws -> UploadCommand {
        let forms = try arguments.options("-F", "--form")
        let raw = try arguments.option("-T", "--upload-file")
        let method = try arguments.option("--method")
        let paused = arguments.flag("--paused")
        let retryUnsafe = arguments.flag("--retry-unsafe")
        let common = try CommonJobOptions.parse(&arguments)
        let remoteArguments = try RemoteArguments.parse(&arguments, upload: true)
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let url = positionals.first else {
            throw UsageError("upload takes one URL (see transferctl upload --help)")
        }
        guard forms.isEmpty != (raw == nil) else {
            throw UsageError("upload needs form parts (-F) or one file (-T), not both and not neither")
        }
        var fields: [FormField] = []
        for form in forms {
            var field: FormField
            do { field = try FormField.parse(form) } catch { throw UsageError(error.message) }
            if let file = field.file { field.file = try readable(file) }
            fields.append(field)
        }
        let remote = try remoteArguments.options(for: url)
        if remote != nil, raw == nil { throw UsageError("a tus or S3 upload sends one file: -T FILE") }
        var job = NewJob(kind: .upload, url: url, path: try raw.map(readable), headers: common.headers,
                         priority: common.priority, batch: common.batch, limit: common.limit,
                         retries: common.retries, paused: paused, method: method?.uppercased(),
                         form: fields.isEmpty ? nil : fields, tls: common.tls, network: common.network,
                         onComplete: common.onComplete, onFail: common.onFail, retryUnsafe: retryUnsafe ? true : nil,
                         headerCommand: common.headerCommand)
        job.remote = remote
        return UploadCommand(job: job)
    }

    /// The absolute path of a file the daemon will read, refused early when it cannot be read.
    private static func readable(_ path: String) throws -> String {
        let absolute = StatePaths.absolute(path)
        if case .failure(let error) = SourceFile.snapshot(absolute) { throw UsageError(error.message) }
        return absolute
    }

    func run(_ context: Context) throws -> ExitStatus {
        try context.queue(job)
    }
}
