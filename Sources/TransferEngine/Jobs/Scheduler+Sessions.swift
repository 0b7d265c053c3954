/// Resumable uploads (tus, S3): an attempt's requests handed to the engine one after another,
/// each durable step recorded before the next request (`SessionTransfer`, `SessionMachine`),
/// and the server's copy of a cancelled upload discarded (`SessionDiscarder`).
extension Scheduler {
    /// Starts a resumable upload's attempt from what the server knows it by (`session`).
    func launchSession(_ job: Job, attempt: Int, reader: SourceReader, session: UploadSession?, parts: [UploadedPart],
                       headers: [String], s3: S3Access?) {
        let id = job.id
        guard let remote = job.remote else { return }
        var machine: any SessionMachine
        let name = String(reader.source.path.split(separator: "/").last ?? "file")
        switch remote.kind {
        case .tus:
            // A backup's file is named by its relative path (its key), anything else by its name.
            let filename = job.key ?? name
            machine = TusUpload(creationURL: job.url, size: reader.source.size, filename: filename,
                                filetype: ContentType.guess(forFilename: filename), chunk: remote.chunkSize, session: session)
        case .s3:
            guard let s3 else { return feed(.attemptEnded(id, AttemptReport(attempt: attempt, outcome: .failed(.credentials("no S3 access"))))) }
            do {
                machine = try S3ObjectUpload(location: s3.location, endpoint: s3.endpoint, size: reader.source.size,
                                             contentType: ContentType.guess(forFilename: name), partSize: remote.chunkSize,
                                             lanes: min(remote.partsInFlight ?? RemoteOptions.defaultPartsInFlight,
                                                        configuration.maxPerHost),
                                             session: session, parts: parts)
            } catch {
                return feed(.attemptEnded(id, AttemptReport(attempt: attempt, outcome: .failed(.request(error.message)))))
            }
        }
        let first = machine.start()
        guard case .send(let request) = first else {
            return feed(.attemptEnded(id, AttemptReport(attempt: attempt, outcome: first.immediateOutcome)))
        }
        logger.debug("job \(id): attempt \(attempt) \(session == nil ? "creates the upload" : "asks the server where the upload stands")")
        launch(id, attempt: attempt) { () throws(TransferError) -> any Transfer in
            let pacer = Pacer(loop: loop, global: upBucket, rate: job.limit, clock: clock)
            return try SessionTransfer(jobID: id, attempt: attempt, machine: machine, first: request, reader: reader,
                                       headers: job.requestHeaders + headers, tls: tlsOptions(job), network: job.network,
                                       signing: s3?.signing, pacer: pacer, stallSeconds: configuration.stallSeconds)
        }
    }

    /// A request of a session ended: the machine's next step.
    func sessionRequestEnded(_ transfer: SessionTransfer, _ easy: CurlEasy, _ code: CurlCode) {
        drive(transfer, transfer.requestEnded(easy, code))
    }

    private func drive(_ transfer: SessionTransfer, _ action: SessionAction) {
        let id = transfer.jobID
        guard engine[id]?.transfer === transfer else { return }  // stopped meanwhile
        switch action {
        case .send(let request):
            guard send(request, of: transfer) else { return }
            // Fill the free lanes (S3 parts in parallel).
            while let more = transfer.more() {
                guard send(more, of: transfer) else { return }
            }
        case .record(let change):
            transfer.recording = true
            let attempt = transfer.attempt
            stored({ store in try Self.write(change, of: id, in: store) }) { scheduler, result in
                // Still this attempt's transfer (not stopped meanwhile)?
                guard let transfer = scheduler.engine[id]?.transfer as? SessionTransfer, transfer.attempt == attempt,
                      transfer.recording else { return }
                switch result {
                case .success:
                    scheduler.drive(transfer, transfer.recorded())
                    // Answers that arrived while it was recorded, one at a time.
                    if let held = transfer.nextHeldAnswer() { scheduler.drive(transfer, held) }
                case .failure(let error):
                    scheduler.logger.error("job \(id): cannot record the upload's progress: \(error)")
                    scheduler.end(transfer, .failed(.local("cannot record the upload's progress: \(error)")))
                }
            }
        case .idle:
            if let held = transfer.nextHeldAnswer() { drive(transfer, held) }
        case .complete:
            end(transfer, .completed)
        case .fail(let error):
            end(transfer, .failed(error))
        }
    }

    /// Hands one request to the engine (a checksummed one once its checksum is computed on a
    /// file thread); false when the attempt ended instead.
    private func send(_ request: SessionRequest, of transfer: SessionTransfer) -> Bool {
        if request.checksummed, request.checksum == nil, case .file(let range) = request.body {
            let (id, attempt, reader, inbox) = (transfer.jobID, transfer.attempt, transfer.reader, inbox!)
            fileThreads.async {
                let crc = Result { () throws(TransferError) in try CRC32.of(range, in: reader) }
                inbox.post { scheduler in
                    guard let transfer = scheduler.engine[id]?.transfer as? SessionTransfer, transfer.attempt == attempt,
                          !transfer.isStopped else { return }
                    switch crc {
                    case .success(let crc):
                        var summed = request
                        summed.checksum = crc.base64
                        _ = scheduler.send(summed, of: transfer)
                    case .failure(let error):
                        scheduler.end(transfer, .failed(error))
                    }
                }
            }
            return true
        }
        let easy: CurlEasy
        do {
            easy = try transfer.begin(request)
            try multi.add(easy)
        } catch let error as TransferError {
            end(transfer, .failed(error))
            return false
        } catch {
            end(transfer, .failed(.network("cannot start the request: \(error)")))
            return false
        }
        bind(transfer, easy)
        return true
    }

    /// The attempt is over: its other requests are taken off the engine.
    private func end(_ transfer: SessionTransfer, _ outcome: AttemptOutcome) {
        for easy in transfer.easies {
            multi.remove(easy)
            transfersByEasy[ObjectIdentifier(easy)] = nil
        }
        transfer.stop()
        feed(.attemptEnded(transfer.jobID, release(transfer, outcome: outcome)))
    }

    private static func write(_ change: SessionChange, of id: JobID, in store: JobStore) throws {
        switch change {
        case .session(let session): try store.saveUploadSession(id, session)
        case .part(let part, let bytes): try store.recordPart(id, part, bytesDone: bytes)
        case .parts(let parts, let bytes): try store.replaceParts(id, parts, bytesDone: bytes)
        case .offset(let bytes): try store.recordRemoteBytes(id, bytes)
        }
    }
}

extension SessionAction {
    /// What a first step that needs no request means for the attempt.
    var immediateOutcome: AttemptOutcome {
        switch self {
        case .complete: .completed
        case .fail(let error): .failed(error)
        case .send, .record, .idle: .failed(.protocolViolation("an upload session must begin with a request"))
        }
    }
}

extension Scheduler {
    /// A cancelled upload's server copy goes: its session is read and the discard sent.
    func discardSession(of id: JobID) {
        stored({ store in try store.job(id).flatMap { job in try store.uploadSession(id).map { (job, $0.session) } } }) { scheduler, result in
            guard case .success(let (job, session)?) = result else { return }
            scheduler.discard([(job, session)])
        }
    }

    /// Cancelled uploads whose server copy was not discarded before the daemon stopped.
    func discardLeftSessions() {
        stored({ store in try store.sessionsToDiscard() }) { scheduler, result in
            guard case .success(let left) = result, !left.isEmpty else { return }
            scheduler.discard(left)
        }
    }

    /// Sends each discard; an S3 job's credentials are read off the loop first.
    private func discard(_ sessions: [(job: Job, session: UploadSession)]) {
        let inbox = inbox!
        fileThreads.async {
            let requests = sessions.map { job, session -> (Job, SessionRequest?, AWSSigning?) in
                switch job.remote?.kind {
                case .tus?: return (job, TusUpload.discard(session), nil)
                case .s3?:
                    guard let access = try? S3Access(job) else { return (job, nil, nil) }
                    return (job, S3ObjectUpload.abort(session, location: access.location, endpoint: access.endpoint), access.signing)
                case nil: return (job, nil, nil)
                }
            }
            inbox.post { scheduler in
                for (job, request, signing) in requests {
                    if job.remote?.kind == .tus, request == nil {
                        // Said once, then forgotten: asking at every start would never get further.
                        scheduler.logger.info("job \(job.id): the tus server offers no termination (Tus-Extension); "
                            + "the unfinished upload stays there until the server expires it")
                        scheduler.forgetSession(of: job.id)
                        continue
                    }
                    guard let request else {
                        scheduler.logger.warn("job \(job.id): cannot ask the server to discard the upload (no credentials?); asked again at the next start")
                        continue
                    }
                    scheduler.logger.info("job \(job.id): asking the server to discard the unfinished upload")
                    scheduler.sessionDiscarder.discard(job.id, request, headers: job.requestHeaders, tls: scheduler.tlsOptions(job),
                                                       network: job.network, signing: signing)
                }
            }
        }
    }

    /// The server discarded the job's upload: nothing is left to ask for.
    func forgetSession(of id: JobID) {
        stored({ store in try store.saveUploadSession(id, nil) }) { scheduler, result in
            if case .failure(let error) = result { scheduler.logger.warn("job \(id): cannot forget the discarded upload: \(error)") }
        }
    }
}
