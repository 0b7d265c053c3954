/// Turning a client's new job into a row.
extension JobStore {
    /// Inserts a validated new job. Uploads resolve and snapshot their files here (on the store's
    /// queue, never the loop thread); resume data becomes the job's resume state. `refusingLinks`:
    /// a backup's file, which must not be a symlink now or when it is read (`SourceFile`).
    func queue(_ new: NewJob, defaultRetries: Int, key: String? = nil, refusingLinks: Bool = false) throws -> Job {
        let retries = new.retries ?? defaultRetries
        guard new.kind == .upload else {
            let resume = new.resumeData.map {
                ResumeState(partialPath: $0.partialPath, bytesDurable: $0.bytesReceived,
                            validators: Validators(etag: $0.etag, lastModified: $0.lastModified), bytesTotal: $0.bytesTotal)
            }
            return try insert(new, maxRetries: retries, resume: resume, key: key)
        }
        var upload = new
        let plan = try UploadPlan.resolve(new, refusingLinks: refusingLinks)
        upload.method = plan.method
        return try insert(upload, maxRetries: retries, resume: nil, upload: plan.spec, bytesTotal: plan.length, key: key)
    }
}
