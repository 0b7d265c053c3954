/// Jobs taken into memory by a command or a manifest.
extension Scheduler {
    /// Takes newly queued (and recorded) jobs into memory, announces them and starts what can
    /// start. A manifest's jobs come in one event: taken one at a time, its first lines started
    /// before its later `high` ones were seen, which then preempted them.
    func adopt(_ jobs: [Job]) {
        feed(.adopted(jobs))
    }
}
