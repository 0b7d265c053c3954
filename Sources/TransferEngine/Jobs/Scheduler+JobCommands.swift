/// What the command service asks of the scheduler: commands for jobs and `wait`s, fed to the
/// core and answered once recorded; and what it reads of the jobs in memory.
extension Scheduler {
    /// Pauses, resumes, cancels or retries job `id` (`loaded` from the store when it is not in
    /// memory); `done` gets the job once the change is recorded, or why not.
    func command(_ command: JobCommand, _ id: JobID, loaded: Job?,
                 done: @escaping (Result<Job, CommandRefusal>) -> Void) {
        let token = nextAnswerToken()
        acknowledgements[token] = done
        feed(.command(command, id, loaded: loaded, ack: token))
    }

    /// Answers once every job of `ids` has ended; `ended` are jobs the store had seen end.
    func wait(for ids: Set<JobID>, ended: [Job], connection: Int, done: @escaping ([Job]) -> Void) {
        let token = nextAnswerToken()
        answers[token] = done
        feed(.wait(token: token, connection: connection, ids: ids, ended: ended))
    }

    /// The jobs that may still move, as they are now.
    var unfinishedJobs: [Job] {
        core.jobs.values.map { current($0.job) }
    }

    func isInMemory(_ id: JobID) -> Bool { core.jobs[id] != nil }

    /// The job ended in memory and its end is not recorded yet.
    func isEnding(_ id: JobID) -> Bool { core.ending[id] != nil }

    /// The client went away: forget what it was waiting for.
    public func connectionClosed(_ connection: Int) {
        dropSubmissions(of: connection)
        events.unsubscribe(connection)
        feed(.connectionClosed(connection))
    }
}
