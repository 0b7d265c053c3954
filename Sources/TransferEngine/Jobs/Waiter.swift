/// A `wait` request still open: the jobs it waits for and those that have ended.
struct Waiter {
    var connection: Int
    var token: Int
    var remaining: Set<JobID>
    var ended: [Job]
}
