/// A wait still open: the jobs it waits for, those that have ended, and whom to tell.
struct Waiter {
    /// Whose wait it is (the command service's connection): all of one owner's go together.
    var owner: Int
    var remaining: Set<JobID>
    var ended: [Job]
    /// Called once, with every ended job, when `remaining` is empty.
    var done: ([Job]) -> Void
}
