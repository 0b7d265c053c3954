import TransferEngine

/// `transferctl upload URL -F ... | -T FILE`: queue an upload streamed from disk.
struct UploadCommand: Subcommand {
    static let help = """
        usage: transferctl upload URL -F 'NAME=VALUE' -F 'NAME=@FILE[;type=MIME][;filename=NAME]' ... [options]
               transferctl upload URL -T FILE [options]
               transferctl upload URL -T FILE --tus [options]
               transferctl upload s3://BUCKET/KEY -T FILE [--s3-endpoint URL] [options]

        Queues an upload and prints the new job's id. -F sends a multipart/form-data body
        (curl's syntax; quote a file or filename holding ';' or '"': -F 'f=@"a;b.txt"');
        -T sends FILE as the raw body. Files are read from disk as they are sent, never
        whole; if one changes after queueing, the job fails with source_changed. After a
        pause or an interruption a plain upload sends its body again from the first byte;
        a tus or S3 upload continues from what the server reports it holds.
        --tus uploads to a tus 1.0 endpoint (URL is where uploads are created): the upload's
        URL is recorded before its first byte, each attempt asks the server for its offset
        and PATCHes from there; cancel deletes it on the server. An s3://BUCKET/KEY URL
        uploads to S3 or an S3-compatible store, signed (SigV4) with the daemon's AWS
        credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN] in its
        environment, else ~/.aws/credentials); files above 16 MiB go in parts (multipart
        upload), each part recorded as the server acknowledges it; cancel aborts it.
        Every attempt of a POST carries the job's Idempotency-Key header (unless -H gives
        one), and a POST is retried only when the server cannot have acted on it.

        options:
          -F, --form PART         a form part (repeatable)
          -T, --upload-file FILE  send FILE as the body
          --method M              POST or PUT (default: POST with -F, PUT with -T)
          --tus                   URL is a tus 1.0 endpoint: a resumable upload
          --chunk-size SIZE       tus: bytes per PATCH (default 32M); S3: bytes per part
                                  (default 8M, more when the file needs over 10,000 parts)
          --parts-in-flight N     S3: parts sent at once, 1 to 16 (default 4; never more than
                                  the daemon's limit of transfers per host)
          --s3-endpoint URL       an S3-compatible store (MinIO, Ceph, ...; path-style requests)
          --region R              the S3 region (default: AWS_REGION, the profile's, us-east-1)
          --profile P             the profile of the daemon's ~/.aws/credentials (default:
                                  AWS_PROFILE, else default)
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
          transferctl upload https://tus.example.com/files/ -T video.mp4 --tus
          transferctl upload s3://backups/db/2026-11-30.dump -T db.dump
          transferctl upload s3://backups/db.dump -T db.dump --s3-endpoint http://127.0.0.1:9000
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
        guard positionals.count == 1, let given = positionals.first else {
            throw UsageError("upload takes one URL (see transferctl upload --help)")
        }
        let (url, guessed) = DefaultScheme.apply(given)
        if let guessed { Context.note(guessed) }
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
