/// Turning a client's new job into a row.
extension JobStore {
    /// Inserts a validated new job. Uploads resolve and snapshot their files here (on the store's
    /// queue, never the loop thread); resume data becomes the job's resume state.
    func queue(_ new: NewJob, defaultRetries: Int, key: String? = nil) throws -> Job {
        let retries = new.retries ?? defaultRetries
        guard new.kind == .upload else {
            let resume = new.resumeData.map {
                ResumeState(partialPath: $0.partialPath, bytesDurable: $0.bytesReceived,
                            validators: Validators(etag: $0.etag, lastModified: $0.lastModified), bytesTotal: $0.bytesTotal)
            }
            return try insert(new, maxRetries: retries, resume: resume, key: key)
        }
        var upload = new
        let plan = try UploadPlan.resolve(new)
        upload.method = plan.method
        return try insert(upload, maxRetries: retries, resume: nil, upload: plan.spec, bytesTotal: plan.length, key: key)
    }
}
