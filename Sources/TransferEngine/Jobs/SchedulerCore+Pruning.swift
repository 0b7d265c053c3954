/// Pruning history, as the decision core sees it: the store proposes ended jobs, the core keeps
/// those it still holds, and the rest are "being pruned" until their deletion is over.
extension SchedulerCore {
    /// The store found `candidates` (ended, matching the prune) for chunk `token`: the core drops
    /// every job it holds in memory (a failed job being retried or cancelled, an end not yet
    /// recorded), every job another prune is deleting, and the jobs of a batch it holds (its end
    /// is not judged yet); the rest are deleted. Until then `perform` treats them as gone, so a
    /// command that read one from the store before it was deleted cannot take it back in.
    ///
    /// Why this is enough: a job leaves the store only through the deletion that follows here,
    /// which runs on the store's (serial) queue after every read the loop had asked for before;
    /// a read the store served before the deletion is answered on the loop before the deletion's
    /// own answer (the store answers in order, the loop's inbox is FIFO), so while the job is
    /// still marked here; a read served after it finds no job.
    mutating func prunable(_ token: Int, _ candidates: [PruneCandidate]) {
        var chunk: [PruneCandidate] = []
        for candidate in candidates where jobs[candidate.id] == nil && ending[candidate.id] == nil
            && !pruningIDs.contains(candidate.id) && !(candidate.batch.map { batches.holds(batch: $0) } ?? false) {
            chunk.append(candidate)
        }
        let ids = chunk.map(\.id)
        pruning[token] = ids
        pruningIDs.formUnion(ids)
        appendAction(.prune(token: token, chunk))
    }

    /// The chunk's deletion is over: its jobs are no longer being pruned (gone, or kept by the
    /// store's own check).
    mutating func pruned(_ token: Int) {
        for id in pruning.removeValue(forKey: token) ?? [] { pruningIDs.remove(id) }
    }

    /// A prune is deleting the job: a command must not take it in from the store.
    func isPruning(_ id: JobID) -> Bool { pruningIDs.contains(id) }
}
