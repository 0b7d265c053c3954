/// The queued jobs in the order they start — best priority first, then oldest — kept per host,
/// so that a host at its connection cap is passed over without looking at its jobs.
/// Entries are not removed when a job leaves `queued`; they are dropped when they come up and
/// the scheduler says they are no longer current. Thread: a value; the loop thread.
struct RunQueue {
    struct Entry: Comparable {
        var rank: Int
        var id: JobID
        /// The host it was queued under (a `modify` can move the job to another).
        var host: String = ""

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.rank, lhs.id) < (rhs.rank, rhs.id) }
    }

    private var hosts: [String: Heap<Entry>] = [:]
    /// Entries of `high` jobs held, current or not: none, and no high job is queued.
    private(set) var highEntries = 0

    mutating func push(_ id: JobID, priority: Priority, host: String) {
        hosts[host, default: Heap()].push(Entry(rank: priority.rank, id: id, host: host))
        if priority == .high { highEntries += 1 }
    }

    /// Removes and returns the best current entry on a host that `admits` lets start one more.
    mutating func pop(admits: (String) -> Bool, isCurrent: (Entry) -> Bool) -> Entry? {
        guard let (host, _) = best(admits: admits, isCurrent: isCurrent) else { return nil }
        return popTop(of: host)
    }

    /// The best current entry and its host, whether or not the host may start more.
    mutating func peek(isCurrent: (Entry) -> Bool) -> (host: String, entry: Entry)? {
        best(admits: { _ in true }, isCurrent: isCurrent).map { (host: $0.0, entry: $0.1) }
    }

    private mutating func best(admits: (String) -> Bool, isCurrent: (Entry) -> Bool) -> (String, Entry)? {
        var best: (String, Entry)?
        for host in Array(hosts.keys) {
            while let top = hosts[host]?.first, !isCurrent(top) { popTop(of: host) }
            guard let top = hosts[host]?.first else {
                hosts[host] = nil
                continue
            }
            if admits(host), best.map({ top < $0.1 }) ?? true { best = (host, top) }
        }
        return best
    }

    @discardableResult
    private mutating func popTop(of host: String) -> Entry? {
        let top = hosts[host]?.pop()
        if top?.rank == Priority.high.rank { highEntries -= 1 }
        return top
    }
}
