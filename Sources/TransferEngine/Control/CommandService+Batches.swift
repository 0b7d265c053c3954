/// submit (a manifest in chunks), backup-plan, batch list, batch show.
extension CommandService {
    // MARK: submit

    /// Keeps a chunk of a manifest; at the final chunk queues all of it (or none) as one batch.
    func submit(_ submission: BatchSubmission?, from origin: ControlServer.Origin, reply: @escaping Reply) {
        guard let submission else { return reply(.failure(ControlError(.badRequest, "submit needs a 'submission' object"))) }
        let staged: Int
        do {
            staged = try scheduler.stage(submission, bytes: origin.lineBytes, connection: origin.connection) { [scheduler] whole, checks in
                scheduler.queue(whole, checks: checks) { result in
                    switch result {
                    case .success(let outcome):
                        reply(ControlResponse(submitted: SubmissionResult(batch: outcome.batch.id, name: outcome.batch.name,
                                                                          jobs: outcome.jobs.count, skipped: outcome.skipped)))
                    case .failure(let refusal):
                        reply(Self.failure(refusal, doing: "cannot queue the manifest"))
                    }
                }
            }
        } catch {
            return reply(.failure(ControlError(error)))
        }
        if !submission.final { reply(ControlResponse(staged: staged)) }
    }

    // MARK: backup-plan

    /// What `submit` would do with each file of a backup (`backup --dry-run`); each request is
    /// answered on its own, and nothing is created or kept.
    func backupPlan(_ submission: BatchSubmission?, reply: @escaping Reply) {
        guard let submission, submission.backup != nil else {
            return reply(.failure(ControlError(.badRequest, "backup-plan needs a 'submission' object with 'backup'")))
        }
        scheduler.plan(submission) { result in
            switch result {
            case .success(let decisions): reply(ControlResponse(plan: decisions))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot plan the backup"))
            }
        }
    }

    // MARK: batch list, batch show

    func batchList(reply: @escaping Reply) {
        scheduler.batchSummaries { result in
            switch result {
            case .success(let batches): reply(ControlResponse(batches: batches))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot read batches"))
            }
        }
    }

    func batchShow(_ request: ControlRequest, reply: @escaping Reply) {
        guard let id = request.batch else { return reply(.failure(ControlError(.badRequest, "batch show needs a batch id"))) }
        scheduler.batch(id) { result in
            switch result {
            case .success(let (batch, hookRuns)): reply(ControlResponse(batches: [batch], hookRuns: hookRuns))
            case .failure(let refusal): reply(Self.failure(refusal, doing: "cannot read batch \(id)"))
            }
        }
    }
}
