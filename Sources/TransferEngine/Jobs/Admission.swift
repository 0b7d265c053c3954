/// Which queued job starts next, and which low-priority job gives its slot to a high one: the
/// decisions of admission, kept apart from everything that performs them. It holds the running
/// jobs by host, the run queue and the preemption in progress; the scheduler tells it every
/// state change (`track`) and asks it (`next`, `preemption`). A value, unit-tested without a
/// loop, curl or a store. Thread: the loop thread.
struct Admission {
    struct Slot: Equatable {
        var host: String
        var priority: Priority
    }

    /// Transfers at once, and at once to one `scheme://host:port`.
    var maxActive: Int
    var maxPerHost: Int
    /// Running jobs that hold a transfer slot.
    private(set) var running: [JobID: Slot] = [:]
    private(set) var runningByHost: [String: Int] = [:]
    /// Running downloads whose bytes have all arrived, being made durable: they hold no slot
    /// (their connection is free for the next transfer) but each keeps its file open, so at
    /// most `maxActive + maxFinishing` jobs run in all.
    private(set) var finishing: Set<JobID> = []
    /// Downloads being made durable beside the transfers (beyond the slots).
    let maxFinishing: Int
    /// A finishing group (a syncfs, a commit, the renames, a directory fsync) takes from a few
    /// to tens of milliseconds; a small file's transfer one or two. At 2 × `maxActive` jobs in
    /// all the slots stood idle for a quarter of a batch of small files, starting only as
    /// groups ended; 8 × kept them busy on a disk where a group took ~5 ms (+18 % files/s). On
    /// one where a syncfs takes ~13 ms and a group ~40, 8 × held the starts back again (each
    /// slot busy 75 % of the time): 32 × gave +14 % there. Fewer when the daemon's descriptors
    /// are few (`DescriptorBudget.finishing`).
    static let jobsPerSlot = 32
    private var queue = RunQueue()
    /// The low job giving its slot away, until it is suspended (one at a time).
    private(set) var preempting: JobID?

    /// `maxFinishing`: nil for `jobsPerSlot - 1` per slot.
    init(maxActive: Int, maxPerHost: Int, maxFinishing: Int? = nil) {
        self.maxActive = maxActive
        self.maxPerHost = maxPerHost
        self.maxFinishing = maxFinishing ?? Self.finishing(forSlots: maxActive)
    }

    /// Downloads finishing beside `slots` transfers when descriptors are no concern.
    static func finishing(forSlots slots: Int) -> Int {
        (jobsPerSlot - 1).saturatingMultiply(max(slots, 1))
    }

    /// A job went from `old` (nil: just loaded) to `new`.
    mutating func track(_ id: JobID, host: String, priority: Priority, from old: JobState?, to new: JobState) {
        guard old != new else { return }
        if old == .running, finishing.remove(id) == nil { freeSlot(id, host: host) }
        if new == .running {
            running[id] = Slot(host: host, priority: priority)
            runningByHost[host, default: 0] += 1
        }
        if new == .queued { queue.push(id, priority: priority, host: host) }
    }

    /// A queued job's priority or host changed: it waits in its new place (the old entry is
    /// dropped when it comes up, no longer current).
    mutating func requeue(_ id: JobID, priority: Priority, host: String) {
        queue.push(id, priority: priority, host: host)
    }

    /// A running job's transfer is over and its file is being made durable: its slot is free.
    mutating func finishes(_ id: JobID, host: String) {
        guard running[id] != nil else { return }
        freeSlot(id, host: host)
        finishing.insert(id)
    }

    private mutating func freeSlot(_ id: JobID, host: String) {
        guard running.removeValue(forKey: id) != nil else { return }
        let count = runningByHost[host, default: 1] - 1
        runningByHost[host] = count > 0 ? count : nil
    }

    /// The queued job to start now — best priority, then oldest — or nil when every slot is
    /// taken or no queued job's host has one free. It is out of the queue once returned: the
    /// caller starts it (and tracks it as running). `isCurrent` drops entries of jobs that left
    /// `queued` or changed priority since they were queued.
    mutating func next(isCurrent: (RunQueue.Entry) -> Bool) -> JobID? {
        guard running.count < maxActive, running.count + finishing.count < maxActive + maxFinishing else { return nil }
        let maxPerHost = maxPerHost
        let byHost = runningByHost
        return queue.pop(admits: { byHost[$0, default: 0] < maxPerHost }, isCurrent: isCurrent)?.id
    }

    /// When the best queued job is `high` and cannot start (every slot, or its host's, is
    /// taken): the running `low` job with the highest id — on that host, when the host is what
    /// is full — which gives its slot to it. Only jobs `preemptible` says can stop (a transfer
    /// is running) are chosen; none while another preemption is under way.
    mutating func preemption(isCurrent: (RunQueue.Entry) -> Bool, preemptible: (JobID) -> Bool) -> (victim: JobID, for: JobID)? {
        // Asked after every event: with no high job queued, the queue is not even looked at.
        guard preempting == nil, queue.highEntries > 0, let (host, entry) = queue.peek(isCurrent: isCurrent),
              entry.rank == Priority.high.rank else { return nil }
        let hostFull = runningByHost[host, default: 0] >= maxPerHost
        guard running.count >= maxActive || hostFull else { return nil }
        let victim = running
            .filter { $0.value.priority == .low && (!hostFull || $0.value.host == host) && preemptible($0.key) }
            .keys.max()
        guard let victim else { return nil }
        preempting = victim
        return (victim, entry.id)
    }

    /// The preempted job has been suspended: another preemption may start.
    mutating func preemptionEnded() {
        preempting = nil
    }
}
