import Testing
@testable import TransferEngine

@Suite struct RunQueueTests {
    private func id(_ value: Int64) -> JobID { JobID(rawValue: value) }

    /// Pops until nothing is left, every host admitted and every entry current.
    private func drain(_ queue: inout RunQueue) -> [Int64] {
        var ids: [Int64] = []
        while let entry = queue.pop(admits: { _ in true }, isCurrent: { _ in true }) { ids.append(entry.id.rawValue) }
        return ids
    }

    /// A queue holding `entries` (id, priority, host), pushed in that order.
    private func queue(_ entries: [(Int64, Priority, String)]) -> RunQueue {
        var queue = RunQueue()
        for (value, priority, host) in entries { queue.push(id(value), priority: priority, host: host) }
        return queue
    }

    @Test func bestPriorityFirstThenLowestIdAcrossHosts() {
        var queue = queue([(5, .normal, "a"), (1, .low, "b"), (7, .high, "c"), (3, .normal, "b"), (2, .normal, "c"),
                           (9, .high, "a"), (4, .low, "a")])
        #expect(drain(&queue) == [7, 9, 2, 3, 5, 1, 4])
        #expect(queue.pop(admits: { _ in true }, isCurrent: { _ in true }) == nil)
        #expect(queue.peek(isCurrent: { _ in true }) == nil)
    }

    @Test func highEntriesCountTheHighEntriesHeldUntilPoppedOrDroppedAsStale() {
        var queue = queue([(1, .high, "a"), (2, .normal, "a"), (3, .high, "b"), (4, .low, "b")])
        #expect(queue.highEntries == 2)
        #expect(queue.pop(admits: { _ in true }, isCurrent: { _ in true })?.id == id(1))
        #expect(queue.highEntries == 1)
        // Job 3 left `queued` (no longer current): dropped when it comes up, and no more counted.
        #expect(queue.peek(isCurrent: { $0.id != id(3) })?.entry.id == id(2))
        #expect(queue.highEntries == 0)
        #expect(drain(&queue) == [2, 4])
        queue.push(id(5), priority: .high, host: "a")
        #expect(queue.highEntries == 1)
    }

    @Test func popReturnsRankAndId() throws {
        var queue = RunQueue()
        queue.push(id(8), priority: .low, host: "h")
        let popped = queue.pop(admits: { _ in true }, isCurrent: { _ in true })
        let entry = try #require(popped)
        #expect(entry == RunQueue.Entry(rank: Priority.low.rank, id: id(8), host: "h"))
    }

    @Test func aHostThatIsNotAdmittedIsPassedOverButKeepsItsEntries() throws {
        var queue = RunQueue()
        queue.push(id(1), priority: .high, host: "full")
        queue.push(id(2), priority: .high, host: "full")
        queue.push(id(3), priority: .low, host: "free")
        queue.push(id(4), priority: .low, host: "free")
        var asked: Set<String> = []
        let notFull: (String) -> Bool = { host in
            asked.insert(host)
            return host != "full"
        }
        #expect(queue.pop(admits: notFull, isCurrent: { _ in true })?.id == id(3))
        #expect(asked == ["full", "free"])
        #expect(queue.pop(admits: notFull, isCurrent: { _ in true })?.id == id(4))
        #expect(queue.pop(admits: notFull, isCurrent: { _ in true }) == nil)
        // The passed-over host's entries are all still there once it is admitted again.
        let top = queue.peek(isCurrent: { _ in true })
        let peeked = try #require(top)
        #expect(peeked.host == "full")
        #expect(peeked.entry.id == id(1))
        #expect(drain(&queue) == [1, 2])
    }

    @Test func nothingIsAdmittedMeansNothingPopsAndNothingIsLost() {
        var queue = RunQueue()
        queue.push(id(1), priority: .normal, host: "a")
        queue.push(id(2), priority: .normal, host: "b")
        #expect(queue.pop(admits: { _ in false }, isCurrent: { _ in true }) == nil)
        #expect(drain(&queue) == [1, 2])
    }

    @Test func staleEntriesAreDroppedWhenTheyComeUp() {
        var queue = RunQueue()
        for value in Int64(1)...5 { queue.push(id(value), priority: .normal, host: "a") }
        queue.push(id(6), priority: .normal, host: "b")
        let stale: Set<Int64> = [1, 2, 6]
        #expect(queue.pop(admits: { _ in true }, isCurrent: { !stale.contains($0.id.rawValue) })?.id == id(3))
        // 1, 2 (top of "a") and 6 (all of "b") were dropped, not merely skipped.
        #expect(drain(&queue) == [4, 5])
    }

    @Test func aQueueOfOnlyStaleEntriesIsEmpty() {
        var queue = RunQueue()
        queue.push(id(1), priority: .high, host: "a")
        queue.push(id(2), priority: .low, host: "b")
        #expect(queue.peek(isCurrent: { _ in false }) == nil)
        #expect(queue.pop(admits: { _ in true }, isCurrent: { _ in false }) == nil)
        #expect(drain(&queue) == [])
    }

    @Test func staleEntriesOfANonAdmittedHostAreStillDropped() {
        var queue = RunQueue()
        queue.push(id(1), priority: .high, host: "full")
        queue.push(id(2), priority: .normal, host: "full")
        #expect(queue.pop(admits: { _ in false }, isCurrent: { $0.id != id(1) }) == nil)
        #expect(drain(&queue) == [2])
    }

    @Test func peekIgnoresAdmissionAndRemovesNothingCurrent() throws {
        var queue = RunQueue()
        queue.push(id(4), priority: .normal, host: "b")
        queue.push(id(3), priority: .high, host: "a")
        queue.push(id(1), priority: .low, host: "a")
        let firstPeek = queue.peek(isCurrent: { _ in true })
        let first = try #require(firstPeek)
        #expect(first.host == "a")
        #expect(first.entry == RunQueue.Entry(rank: Priority.high.rank, id: id(3), host: "a"))
        let againPeek = queue.peek(isCurrent: { _ in true })
        let again = try #require(againPeek)
        #expect(again.entry.id == id(3))
        // A stale best entry is skipped (and dropped) by peek too.
        let nextPeek = queue.peek(isCurrent: { $0.id != id(3) })
        let next = try #require(nextPeek)
        #expect(next.host == "b")
        #expect(next.entry.id == id(4))
        #expect(drain(&queue) == [4, 1])
    }

    @Test func duplicatesOfOneIdAtDifferentPrioritiesYieldOnlyTheCurrentOne() {
        // A job queued as low, then re-prioritised to high: two entries, only the high one current.
        var queue = RunQueue()
        queue.push(id(1), priority: .low, host: "a")
        queue.push(id(2), priority: .normal, host: "a")
        queue.push(id(1), priority: .high, host: "a")
        var current: [Int64: Int] = [1: Priority.high.rank, 2: Priority.normal.rank]
        var popped: [RunQueue.Entry] = []
        while let entry = queue.pop(admits: { _ in true }, isCurrent: { current[$0.id.rawValue] == $0.rank }) {
            popped.append(entry)
            current[entry.id.rawValue] = nil  // it is running now
        }
        #expect(popped == [RunQueue.Entry(rank: 0, id: id(1), host: "a"), RunQueue.Entry(rank: 1, id: id(2), host: "a")])
        #expect(drain(&queue) == [])
    }

    @Test func identicalDuplicatesAreBothKeptUntilTheCallerSaysOtherwise() {
        // Queued, paused and queued again at the same priority: the run queue holds both entries;
        // the second is dropped once the job has left `queued`.
        var queue = RunQueue()
        queue.push(id(1), priority: .normal, host: "a")
        queue.push(id(1), priority: .normal, host: "a")
        var queued: Set<Int64> = [1]
        let first = queue.pop(admits: { _ in true }, isCurrent: { queued.contains($0.id.rawValue) })
        #expect(first?.id == id(1))
        queued.remove(1)
        #expect(queue.pop(admits: { _ in true }, isCurrent: { queued.contains($0.id.rawValue) }) == nil)

        var other = RunQueue()
        other.push(id(1), priority: .normal, host: "a")
        other.push(id(1), priority: .normal, host: "a")
        #expect(drain(&other) == [1, 1])
    }

    @Test func hostsEmptiedByPopsCanBeRefilled() {
        var queue = RunQueue()
        queue.push(id(1), priority: .normal, host: "a")
        #expect(drain(&queue) == [1])
        queue.push(id(2), priority: .low, host: "a")
        queue.push(id(3), priority: .high, host: "a")
        #expect(drain(&queue) == [3, 2])
    }
}
