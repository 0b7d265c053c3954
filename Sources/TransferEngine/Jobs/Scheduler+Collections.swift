/// Directory backups to WebDAV servers: the collections a backup's PUT needs are made (MKCOL)
/// before its transfer starts; a refused one fails the attempt with its status.
extension Scheduler {
    /// Calls `start` once `collections` exist (at once when there are none, or all are known).
    func makeCollections(_ collections: [String], for job: Job, attempt: Int,
                         then start: @escaping () -> Void) {
        guard !collections.isEmpty, let batch = job.batch else { return start() }
        let id = job.id
        let access = CollectionMaker.Access(headers: job.headers, tls: tlsOptions(job), network: job.network,
                                            stallSeconds: configuration.stallSeconds)
        // Paused, cancelled or stopping meanwhile: that change is already recorded.
        let current = { [unowned self] in core.isCurrentAttempt(id, attempt) }
        logger.debug("job \(id): attempt \(attempt) needs \(collections.count) collections")
        collectionMaker.ensure(collections[...], batch: batch, access: access, wanted: current) { [unowned self] result in
            guard current() else { return }
            switch result {
            case .success:
                start()
            case .failure(let error):
                feed(.attemptEnded(id, AttemptReport(attempt: attempt, outcome: .failed(error), status: error.status)))
            }
        }
    }
}
