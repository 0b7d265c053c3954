import Testing
@testable import TransferEngine

/// Thousands of random event sequences through the decision values, checking after each event
/// what must always hold: never more running than the caps, nothing started that was not
/// queued, a batch ending exactly once per time its last job ends, and every end recorded.
@Suite struct DecisionInvariantTests {
    @Test(arguments: 0..<40)
    func randomEventsKeepTheInvariants(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed) &* 7919)
        func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
        let maxActive = 1 + below(4), maxPerHost = 1 + below(3)
        var admission = Admission(maxActive: maxActive, maxPerHost: maxPerHost)
        var ledger = BatchLedger()
        var state: [JobID: JobState] = [:]
        var priority: [JobID: Priority] = [:]
        var host: [JobID: String] = [:]
        var pendingEnds: [JobID] = []  // ends sent, not yet recorded, in any order
        /// The batch's end was reported since a job of it was last unfinished.
        var reported = false
        let batch: Int64 = 1

        func move(_ id: JobID, to new: JobState) {
            let old = state[id]
            #expect(old.map { $0.canTransition(to: new) } ?? true, "seed \(seed): \(String(describing: old)) -> \(new)")
            admission.track(id, host: host[id]!, priority: priority[id]!, from: old, to: new)
            ledger.track(batch: batch, from: old, to: new)
            state[id] = new
            if !new.hasEnded { reported = false }
            if new.hasEnded {
                ledger.endSent(batch: batch)
                pendingEnds.append(id)
            }
        }
        /// An end comes back from the store; when the batch ends, everything must have.
        func record(at index: Int) {
            pendingEnds.remove(at: index)
            guard ledger.endRecorded(batch: batch) else { return }
            #expect(state.values.allSatisfy(\.hasEnded) && pendingEnds.isEmpty,
                    "seed \(seed): the batch ended with jobs unfinished or ends unrecorded")
            #expect(!reported, "seed \(seed): the batch ended twice")
            reported = true
        }
        func isCurrent(_ entry: RunQueue.Entry) -> Bool {
            state[entry.id] == .queued && priority[entry.id]!.rank == entry.rank
        }

        for step in 0..<300 {
            let ids = state.keys.sorted()  // (in order: a seed replays the same run)
            switch below(8) {
            case 0, 1:  // a new job
                let id = JobID(rawValue: Int64(state.count + 1))
                priority[id] = [.low, .normal, .high][below(3)]
                host[id] = "h\(below(3))"
                move(id, to: below(5) == 0 ? .paused : .queued)
            case 2:  // start what may start
                while let id = admission.next(isCurrent: isCurrent) {
                    #expect(state[id] == .queued, "seed \(seed) step \(step): started a job that was \(String(describing: state[id]))")
                    move(id, to: .running)
                }
            case 3:  // a running job ends, or waits
                if let id = ids.filter({ state[$0] == .running }).randomElement(using: &random) {
                    move(id, to: [.completed, .failed, .waiting, .cancelled][below(4)])
                }
            case 4:  // pause / resume / retry
                if let id = ids.randomElement(using: &random), let current = state[id] {
                    let target: JobState? = switch current {
                    case .queued, .running, .waiting: .paused
                    case .paused, .failed: .queued
                    default: nil
                    }
                    if let target, current.canTransition(to: target) { move(id, to: target) }
                }
            case 5:  // preemption, done at once
                if let (victim, high) = admission.preemption(isCurrent: isCurrent, preemptible: { _ in true }) {
                    #expect(state[victim] == .running && priority[victim] == .low, "seed \(seed): victim \(victim)")
                    #expect(priority[high] == .high && state[high] == .queued, "seed \(seed): for \(high)")
                    move(victim, to: .queued)
                    admission.preemptionEnded()
                }
            default:  // an end comes back from the store, in any order
                if !pendingEnds.isEmpty { record(at: below(pendingEnds.count)) }
            }
            // Invariants after every event.
            let running = state.filter { $0.value == .running }
            #expect(admission.running.count == running.count, "seed \(seed) step \(step)")
            #expect(running.count <= maxActive, "seed \(seed) step \(step): \(running.count) > \(maxActive)")
            for (h, count) in admission.runningByHost {
                #expect(count <= maxPerHost, "seed \(seed) step \(step): \(count) on \(h)")
                #expect(count == running.keys.filter { host[$0] == h }.count)
            }
        }
        // Every job ends and every end comes back: the batch has then ended, and been told so.
        for id in state.keys.sorted() where !state[id]!.hasEnded {
            if state[id]!.canTransition(to: .cancelled) { move(id, to: .cancelled) }
        }
        while !pendingEnds.isEmpty { record(at: below(pendingEnds.count)) }
        #expect(state.isEmpty || reported, "seed \(seed): the batch's end was never reported")
    }
}
