import Testing
@testable import TransferEngine

/// Admission decisions without a loop, curl or a store: the global and per-host caps, the order
/// of the queue, and which low job gives its slot to a high one.
@Suite struct AdmissionTests {
    /// The priority and host of each job the tests use, and what is still queued.
    final class World {
        var admission: Admission
        var priority: [JobID: Priority] = [:]
        var host: [JobID: String] = [:]
        var state: [JobID: JobState] = [:]

        init(maxActive: Int, maxPerHost: Int, maxFinishing: Int? = nil) {
            admission = Admission(maxActive: maxActive, maxPerHost: maxPerHost, maxFinishing: maxFinishing)
        }

        func queue(_ id: Int64, _ priority: Priority = .normal, host: String = "h1") {
            let job = JobID(rawValue: id)
            self.priority[job] = priority
            self.host[job] = host
            move(job, to: .queued)
        }

        func move(_ job: JobID, to new: JobState) {
            admission.track(job, host: host[job]!, priority: priority[job]!, from: state[job], to: new)
            state[job] = new
        }

        /// Starts what admission lets start, as the scheduler does; returns the ids in order.
        @discardableResult
        func startAll() -> [Int64] {
            var started: [Int64] = []
            while let id = admission.next(isCurrent: { self.state[$0.id] == .queued && self.priority[$0.id]!.rank == $0.rank }) {
                move(id, to: .running)
                started.append(id.rawValue)
            }
            return started
        }

        func preemption() -> (victim: Int64, for: Int64)? {
            admission.preemption(isCurrent: { self.state[$0.id] == .queued && self.priority[$0.id]!.rank == $0.rank },
                                 preemptible: { _ in true })
                .map { ($0.victim.rawValue, $0.for.rawValue) }
        }
    }

    @Test func neverMoreThanMaxActiveRun() {
        let world = World(maxActive: 2, maxPerHost: 10)
        for id in 1...5 { world.queue(Int64(id), host: "h\(id)") }
        #expect(world.startAll() == [1, 2])
        #expect(world.admission.running.count == 2)
        world.move(JobID(rawValue: 1), to: .completed)
        #expect(world.startAll() == [3], "a freed slot takes the oldest queued job")
    }

    @Test func aFinishingJobFreesItsSlotAndItsHostsUntilMaxFinishingBesideTheSlotsRun() {
        let world = World(maxActive: 2, maxPerHost: 1)
        let all = Int64(2 + world.admission.maxFinishing)
        for id in 1...all + 2 { world.queue(id, host: id < all ? "a" : "h\(id)") }
        #expect(world.startAll() == [1, all])
        world.admission.finishes(JobID(rawValue: 1), host: "a")
        #expect(world.admission.runningByHost["a"] == nil, "its connection is free for the host's next job")
        for id in 2..<all {
            #expect(world.startAll() == [id])
            world.admission.finishes(JobID(rawValue: id), host: "a")
        }
        #expect(world.startAll() == [], "1 … \(all - 1) finishing and \(all) transferring: 31 beside each slot")
        world.move(JobID(rawValue: 1), to: .completed)
        #expect(world.admission.finishing.count == Int(all) - 2)
        #expect(world.startAll() == [all + 1])
    }

    @Test func downloadsFinishingAreBoundByTheDescriptorsTheDaemonHas() {
        #expect(World(maxActive: 4, maxPerHost: 4).admission.maxFinishing == 124, "31 beside each slot by default")
        let world = World(maxActive: 1, maxPerHost: 1, maxFinishing: 2)
        for id in 1...5 { world.queue(Int64(id)) }
        for id in 1...3 {
            #expect(world.startAll() == [Int64(id)])
            world.admission.finishes(JobID(rawValue: Int64(id)), host: "h1")
        }
        #expect(world.startAll() == [], "two finishing beside the slot: the third keeps its file open in the slot's place")
        world.move(JobID(rawValue: 1), to: .completed)
        #expect(world.startAll() == [4])
    }

    @Test func aHostAtItsCapIsPassedOverForAnother() {
        let world = World(maxActive: 4, maxPerHost: 2)
        world.queue(1, host: "a"); world.queue(2, host: "a"); world.queue(3, host: "a"); world.queue(4, host: "b")
        #expect(world.startAll() == [1, 2, 4], "job 3 waits for its host, job 4 goes ahead")
        #expect(world.admission.runningByHost == ["a": 2, "b": 1])
        world.move(JobID(rawValue: 2), to: .paused)
        #expect(world.startAll() == [3])
    }

    @Test func bestPriorityThenOldestStartsFirst() {
        let world = World(maxActive: 1, maxPerHost: 1)
        world.queue(1, .low); world.queue(2, .normal); world.queue(3, .high); world.queue(4, .high)
        var order: [Int64] = []
        for _ in 0..<4 {
            let started = world.startAll()
            order += started
            if let id = started.first { world.move(JobID(rawValue: id), to: .completed) }
        }
        #expect(order == [3, 4, 2, 1])
    }

    @Test func entriesOfJobsThatLeftTheQueueAreDropped() {
        let world = World(maxActive: 2, maxPerHost: 2)
        world.queue(1); world.queue(2); world.queue(3)
        world.move(JobID(rawValue: 1), to: .paused)
        world.move(JobID(rawValue: 2), to: .cancelled)
        #expect(world.startAll() == [3])
    }

    @Test func aQueuedHighJobTakesTheSlotOfTheNewestLowOne() {
        let world = World(maxActive: 2, maxPerHost: 10)
        world.queue(1, .low, host: "a"); world.queue(2, .low, host: "b")
        world.startAll()
        world.queue(3, .high, host: "c")
        #expect(world.startAll() == [])
        let preemption = world.preemption()
        #expect(preemption?.victim == 2 && preemption?.for == 3)
        #expect(world.preemption() == nil, "one preemption at a time")
        world.move(JobID(rawValue: 2), to: .queued)
        world.admission.preemptionEnded()
        #expect(world.startAll() == [3], "the high job starts in the freed slot")
        #expect(world.preemption() == nil, "the preempted job waits; no high job is left to preempt for")
    }

    @Test func whenTheHostIsFullOnlyALowJobOfThatHostIsPreempted() {
        let world = World(maxActive: 10, maxPerHost: 1)
        world.queue(1, .low, host: "a"); world.queue(2, .low, host: "b")
        world.startAll()
        world.queue(3, .high, host: "b")
        #expect(world.preemption()?.victim == 2, "job 1 runs on another host and keeps its slot")
    }

    @Test func noPreemptionForANormalJobOrWithoutALowOneOrWithAFreeSlot() {
        let world = World(maxActive: 1, maxPerHost: 1)
        world.queue(1, .normal); world.startAll()
        world.queue(2, .high)
        #expect(world.preemption() == nil, "a normal job is never preempted")
        let low = World(maxActive: 1, maxPerHost: 1)
        low.queue(1, .low); low.startAll()
        low.queue(2, .normal)
        #expect(low.preemption() == nil, "only a high job preempts")
        let free = World(maxActive: 2, maxPerHost: 2)
        free.queue(1, .low); free.startAll()
        free.queue(2, .high)
        #expect(free.preemption() == nil, "a free slot needs no preemption")
    }

    @Test func aJobThatCannotStopIsNotChosen() {
        let world = World(maxActive: 1, maxPerHost: 1)
        world.queue(1, .low); world.startAll()
        world.queue(2, .high)
        let choice = world.admission.preemption(isCurrent: { _ in true }, preemptible: { _ in false })
        #expect(choice == nil)
        #expect(world.admission.preempting == nil)
    }
}
