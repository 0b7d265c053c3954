/// What `show` reads of one job: its record, every attempt, the upload's answer, its hooks.
struct JobDetails {
    var job: Job
    var attempts: [AttemptRecord]
    var response: UploadResponse?
    var hookRuns: [HookRun]
    /// A resumable upload's session with its server, while one is recorded.
    var session: UploadSession?
}
