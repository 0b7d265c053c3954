import Dispatch

/// The engine's durable steps of a download: checkpoints while it runs, the truncation when
/// the server sends the whole entity again, and the finishing of the file.
extension Scheduler {
    /// Keeps `transfer` while its durable step runs off the loop; `finished` gives it back
    /// if it is still its job's running transfer (not stopped meanwhile).
    private func durableStep(of transfer: DownloadTransfer) -> Int {
        let token = nextAnswerToken()
        durableSteps[token] = transfer
        return token
    }

    private func finished(_ step: Int) -> DownloadTransfer? {
        guard let transfer = durableSteps.removeValue(forKey: step),
              engine[transfer.jobID]?.transfer === transfer else { return nil }
        return transfer
    }

    /// Syncs the bytes written so far and records their length (fdatasync before the record).
    func checkpoint(_ transfer: DownloadTransfer) {
        recordHeldStart(of: transfer.jobID)  // the attempt's row, which the checkpoint's bytes update
        transfer.durabilityInFlight = true
        let state = transfer.checkpoint
        let id = transfer.jobID
        let attempt = transfer.attempt
        let received = transfer.received
        let file = transfer.file
        let step = durableStep(of: transfer)
        durably({ try file.sync() }, record: { store in
            try store.saveResume(id, state.identified(by: file, writing: true))
            try store.recordAttemptBytes(id, number: attempt, bytes: received)
        }, deferrable: true) { scheduler, result in
            guard let transfer = scheduler.finished(step) else { return }
            switch result {
            case .success:
                transfer.recorded(state)
            case .failure(let error):
                scheduler.logger.warn("job \(id): checkpoint failed: \(error)")
                transfer.durabilityFailed()
            }
        }
    }

    /// The answer to a download into a directory named its file: records the name (as the job's
    /// `onExists` says when it is taken) before the body is written.
    func name(_ transfer: DownloadTransfer, _ name: String) {
        let id = transfer.jobID
        guard let job = core.jobs[id]?.job, let directory = job.outputDirectory else { return transfer.named() }
        let onExists = job.existing
        let step = durableStep(of: transfer)
        stored({ store in try store.name(id, directory: directory, name, onExists: onExists) }) { scheduler, result in
            guard let transfer = scheduler.finished(step) else { return }  // the attempt ended meanwhile
            switch result {
            case .success(let path):
                scheduler.logger.info("job \(id): the server's answer names it \(path)")
                scheduler.feed(.named(id, path: path))
                transfer.named()
            case .failure(let error as TransferError):
                transfer.namingFailed(error)
            case .failure(let refusal as DestinationRefusal):
                transfer.namingFailed(.local(refusal.message))
            case .failure(let error):
                transfer.namingFailed(.io(path: directory, operation: "record the name: \(error)", errno: 0))
            }
        }
    }

    /// A 200 replaced the entity we were continuing: empty the partial file, record the new
    /// entity at 0 bytes, then let the paused transfer write from the start.
    func truncate(_ transfer: DownloadTransfer) {
        recordHeldStart(of: transfer.jobID)  // a resume state is recorded after its attempt's number
        transfer.durabilityInFlight = true
        var state = transfer.resume
        state.bytesDurable = 0
        let fresh = state
        let id = transfer.jobID
        let file = transfer.file
        let step = durableStep(of: transfer)
        logger.info("job \(id): the server sent the whole entity; starting over from byte 0")
        durably({ try file.truncate(to: 0) }, record: { try $0.saveResume(id, fresh.identified(by: file, writing: true)) }) { scheduler, result in
            guard let transfer = scheduler.finished(step) else { return }
            switch result {
            case .success:
                transfer.truncated(fresh)
            case .failure(let error):
                transfer.durabilityFailed()
                let failure = error as? TransferError ?? .io(path: file.path, operation: "truncate", errno: 0)
                scheduler.stopTransfer(of: id) { report in
                    guard var report else { return }
                    report.outcome = .failed(failure)
                    scheduler.feed(.attemptEnded(id, report))
                }
            }
        }
    }

    /// Verifies the finished file (its sha256, off the loop thread), then hands it to the
    /// finishing group, which syncs it, marks the resume state `finalizing` (so a crash after the
    /// rename is recognised), renames it into place and records its `completion`, together with
    /// the files that finish at the same time.
    func finalize(_ id: JobID, _ report: AttemptReport, completion: StateRecord?) {
        guard let job = core.jobs[id]?.job, let file = engine[id]?.file,
              let state = report.resume ?? engine[id]?.resume else {
            return feed(.finalized(id, report, .failure(.io(path: "", operation: "finish: no partial file", errno: 0))))
        }
        var report = report
        report.resume = state
        let finished = report
        let inbox = inbox!
        guard let destination = job.path else {
            return feed(.finalized(id, report, .failure(.io(path: file.path, operation: "finish: the server never named the file",
                                                            errno: 0))))
        }
        // The finishing thread holds the file from here on, and closes one it moved into place
        // (on the loop a close was 1 % of its time in a batch of small files); one it could not
        // finish comes back for what follows (a retry resumes it, a pause syncs it).
        engine[id]?.file = nil
        // A start still held is recorded with the completion, in its group's transaction.
        var completion = completion
        let started = completion == nil ? nil : takeHeldStart(of: id)
        completion?.heldStart = started
        let finish = FinishGroup.Finish(job: id, file: file, state: state, destination: destination,
                                        replacing: job.existing == .overwrite, mode: FileModes(umask: job.umask).file,
                                        completion: completion) { result in
            switch result {
            case .success(let recorded):
                inbox.post { scheduler in
                    if let started, let recorded { scheduler.feed(.recorded(token: started.token, error: recorded.error)) }
                    if let started, recorded == nil { scheduler.hold(started) }
                    scheduler.feed(.finalized(id, finished, .success(state.bytesDurable), recorded: recorded))
                }
            case .failure(let error):
                inbox.post { scheduler in
                    if let started { scheduler.hold(started) }  // not recorded: held again for what follows
                    scheduler.engineJob(id).file = file
                    scheduler.feed(.finalized(id, finished, .failure(error)))
                }
            }
        }
        guard let expected = job.sha256?.lowercased() else { return finishGroup.finish(finish) }
        let group = finishGroup
        hashThreads.async {
            do throws(TransferError) {
                let actual = try file.sha256(length: state.bytesDurable)
                guard actual == expected else { throw TransferError.checksumMismatch(expected: expected, actual: actual) }
                group.finish(finish)
            } catch {
                finish.done(.failure(error))
            }
        }
    }
}
