/// Jobs taken into memory by a command or a manifest.
extension Scheduler {
    /// Takes a newly queued (and recorded) job into memory, announces it and starts what can start.
    func adopt(_ job: Job) {
        feed(.adopted(job))
    }
}
