/// What a user may ask of jobs that exist, in the scheduler's own words: the control protocol's
/// commands are mapped to these in Control/, so the core does not depend on the wire. Raw
/// values are the words its refusals name.
enum JobCommand: String, Sendable, CaseIterable {
    case pause, resume, cancel, retry

    /// The state the command moves a job in `state` to, or nil when that state does not allow it.
    func target(from state: JobState) -> JobState? {
        let target: JobState
        switch (self, state) {
        case (.pause, _): target = .paused
        case (.resume, .paused), (.resume, .waiting): target = .queued
        case (.cancel, _): target = .cancelled
        case (.retry, .failed), (.retry, .waiting): target = .queued
        default: return nil
        }
        return state.canTransition(to: target) ? target : nil
    }

    /// Whether a job in `state` already is where the command would move it: pausing a paused
    /// job, resuming a queued or running one. Such a command succeeds and changes nothing, so a
    /// script may repeat itself.
    func isSatisfied(by state: JobState) -> Bool {
        switch self {
        case .pause: state == .paused
        case .resume: state == .queued || state == .running
        case .cancel, .retry: false
        }
    }

    /// Whether `--all` (or `--batch`) applies the command to `job`.
    func appliesInBulk(to job: Job) -> Bool {
        let state = job.state
        switch self {
        case .pause: return state == .queued || state == .running || state == .waiting
        case .resume: return state == .paused || state == .waiting
        case .cancel: return !state.isFinal
        case .retry: return (state == .failed || state == .waiting) && !job.isQuarantined
        }
    }
}
