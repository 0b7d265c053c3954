/// A wait still open, as the decision core keeps it: whose it is, the jobs it waits for and
/// those that have ended. Answered (`answer`) with every ended job once `remaining` is empty.
struct Waiter {
    /// Whose wait it is (the command service's connection): all of one owner's go together.
    var owner: Int
    /// Names the answer.
    var token: Int
    var remaining: Set<JobID>
    var ended: [Job]
}

extension Waiter {
    /// `id` is the only job it still waits for.
    func isLast(_ id: JobID) -> Bool { remaining.count == 1 && remaining.contains(id) }
}
