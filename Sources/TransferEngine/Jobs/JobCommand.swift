/// What a user may ask of jobs that exist, in the scheduler's own words: the control protocol's
/// commands are mapped to these in Control/, so the core does not depend on the wire. Raw
/// values are the words its refusals name.
enum JobCommand: String, Sendable, CaseIterable {
    case pause, resume, cancel, retry
}
