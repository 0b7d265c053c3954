import Testing
@testable import TransferEngine

/// Thousands of random event sequences through the whole decision core — jobs arriving,
/// commands, attempts ending every way, stops, finalizing, records coming back out of order or
/// failing, retry timers, hosts answering, stalls, waits — checking after every event what must
/// always hold, then draining each run and checking that every wait and command was answered.
@Suite struct SchedulerCoreInvariantTests {
    @Test func randomSequencesKeepTheInvariants() {
        for seed in 0..<2_000 { run(seed: UInt64(seed)) }
    }

    private func run(seed: UInt64) {
        var random = SplitMix64(seed: seed &* 0x9E37_79B9 &+ 17)
        func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
        let maxActive = 1 + below(4), maxPerHost = 1 + below(3)
        var model = Model(driver: CoreDriver(maxActive: maxActive, maxPerHost: maxPerHost, maxHooks: 1 + below(3), seed: seed),
                          seed: seed)
        for step in 0..<120 {
            model.step = step
            switch below(16) {
            case 0, 1: model.adopt(id: Int64(model.known.count + 1), host: "h\(below(3))",
                                   priority: [.low, .normal, .high][below(3)], batch: below(3) == 0 ? nil : Int64(1 + below(2)),
                                   kind: below(3) == 0 ? .upload : .download, paused: below(6) == 0)
            case 2, 3:
                guard let id = model.anyKnown(below) else { continue }
                model.command(JobCommand.allCases[below(4)], id)
            case 4, 5:
                guard let (id, attempt) = model.anyAttempt(below) else { continue }
                let outcomes: [AttemptOutcome] = [.completed, .failed(.httpStatus(503)), .failed(.network("reset")),
                                                  .failed(.unreachable("refused")), .failed(.httpStatus(404)),
                                                  .failed(.tooLarge(limit: 1)), .failed(.fdShortage("EMFILE")),
                                                  .failed(.diskFull(path: "/d")), .startOver(reason: "changed")]
                model.attemptEnded(id, attempt, outcomes[below(outcomes.count)], grow: Int64(below(5000)))
            case 6:
                guard let id = model.anyStopping(below) else { continue }
                model.stopped(id, withTransfer: below(4) != 0, grow: Int64(below(5000)))
            case 7:
                guard let id = model.anyFinalizing(below) else { continue }
                let results: [Result<Int64, TransferError>] = [.success(0), .failure(.io(path: "/d", operation: "rename", errno: 5)),
                                                               .failure(.checksumMismatch(expected: "a", actual: "b"))]
                model.finalized(id, results[below(3)], recordedWithIt: below(2) == 0)
            case 8, 9, 10: model.recordOne(below, failing: below(25) == 0)
            case 11: model.claim(below)
            case 12:
                model.driver.advance(milliseconds: Int64(below(120_000)))
                model.send(.retryDue)
            case 13: model.send(.hostAnswered("http://h\(below(3)):8080"))
            case 14: model.tick(below)
            default: model.waitOrDrop(below)
            }
        }
        model.drain()
    }
}

/// The test's own account of the jobs, kept from the actions alone, and the checks.
private struct Model {
    var driver: CoreDriver
    let seed: UInt64
    var step = 0
    /// Every job ever seen, as last recorded (or as handed over).
    var known: [JobID: Job] = [:]
    /// Each job's state as its records say, in the order they were asked for.
    var state: [JobID: JobState] = [:]
    var durable: [JobID: Int64] = [:]
    var written: [JobID: Int64] = [:]
    var pendingClaims: [JobID] = []
    var asked: Set<Int> = []
    var waits: Set<Int> = []
    var dropped: Set<Int> = []
    var waitOwner: [Int: Int] = [:]
    var batchEndedSinceUnfinished: [Int64: Bool] = [:]
    private var seen = 0

    init(driver: CoreDriver, seed: UInt64) {
        self.driver = driver
        self.seed = seed
    }

    var where_: String { "seed \(seed) step \(step)" }

    mutating func send(_ event: SchedulerEvent) {
        driver.send(event)
        check()
    }

    mutating func adopt(id: Int64, host: String, priority: Priority, batch: Int64?, kind: JobKind, paused: Bool) {
        let job = makeJob(id, state: paused ? .paused : .queued, kind: kind, host: host, priority: priority, batch: batch)
        known[job.id] = job
        state[job.id] = job.state
        if let batch { batchEndedSinceUnfinished[batch] = false }
        send(.adopted([job]))
    }

    func anyKnown(_ below: (Int) -> Int) -> JobID? {
        known.isEmpty ? nil : known.keys.sorted()[below(known.count)]
    }

    func anyAttempt(_ below: (Int) -> Int) -> (JobID, Int)? {
        let ids = driver.core.jobs.values.filter { $0.phase == .attempt }.map(\.id).sorted()
        guard !ids.isEmpty else { return nil }
        let id = ids[below(ids.count)]
        return (id, driver.core.jobs[id]!.job.attempts)
    }

    func anyStopping(_ below: (Int) -> Int) -> JobID? {
        let ids = driver.core.jobs.values.filter { if case .stopping = $0.phase { true } else { false } }.map(\.id).sorted()
        return ids.isEmpty ? nil : ids[below(ids.count)]
    }

    func anyFinalizing(_ below: (Int) -> Int) -> JobID? {
        let ids = driver.core.jobs.values.filter { if case .finalizing = $0.phase { true } else { false } }.map(\.id).sorted()
        return ids.isEmpty ? nil : ids[below(ids.count)]
    }

    mutating func command(_ command: JobCommand, _ id: JobID) {
        let ack = driver.token()
        asked.insert(ack)
        // Not in memory: the command service reads it from the store (which may not have its end yet).
        let loaded = driver.core.jobs[id] == nil ? known[id] : nil
        let before = driver.actions.count
        send(.command(command, id, loaded: loaded, ack: ack))
        for case .claimDestination(let claimed, _) in driver.actions[before...] { pendingClaims.append(claimed) }
    }

    /// A report whose kept bytes never go backwards unless the file was started over.
    mutating func report(_ id: JobID, _ attempt: Int, _ outcome: AttemptOutcome, grow: Int64) -> AttemptReport {
        guard known[id]?.kind == .download else { return makeReport(attempt, outcome) }
        written[id, default: durable[id] ?? 0] += grow
        return makeReport(attempt, outcome, kept: written[id]!, id: id.rawValue)
    }

    mutating func attemptEnded(_ id: JobID, _ attempt: Int, _ outcome: AttemptOutcome, grow: Int64) {
        let report = report(id, attempt, outcome, grow: grow)
        send(.attemptEnded(id, report))
    }

    mutating func stopped(_ id: JobID, withTransfer: Bool, grow: Int64) {
        let attempt = driver.core.jobs[id]!.job.attempts
        send(.stopped(id, withTransfer ? report(id, attempt, .completed, grow: grow) : nil))
    }

    /// `recordedWithIt`: a completion is recorded by its finishing group, as the store's queue
    /// orders it: after every earlier record of the job.
    mutating func finalized(_ id: JobID, _ result: Result<Int64, TransferError>, recordedWithIt: Bool) {
        let attempt = driver.core.jobs[id]!.job.attempts
        let report = report(id, attempt, .completed, grow: 0)
        let bytes = result.map { _ in report.resume?.bytesDurable ?? 0 }
        if recordedWithIt, case .success = bytes, !driver.unrecorded.contains(where: { $0.id == id }),
           let completion = driver.completion(of: id) {
            checkRecord(completion)
            send(.finalized(id, report, bytes, recorded: RecordedCompletion(record: completion)))
            // Forgotten once recorded: the store's copy is what a later command loads.
            known[id]?.apply(completion.change, now: completion.at)
            return
        }
        send(.finalized(id, report, bytes))
    }

    /// The store records one change, never before an earlier one of the same job.
    mutating func recordOne(_ below: (Int) -> Int, failing: Bool) {
        let pending = driver.unrecorded
        let candidates = pending.indices.filter { index in
            !pending[..<index].contains { $0.id == pending[index].id }
        }
        guard !candidates.isEmpty else { return }
        driver.recordAt(candidates[below(candidates.count)], failing: failing)
        check()
    }

    mutating func claim(_ below: (Int) -> Int) {
        guard !pendingClaims.isEmpty else { return }
        let id = pendingClaims.remove(at: below(pendingClaims.count))
        let taken = DestinationRefusal.taken(path: known[id]?.path ?? "", owner: JobID(rawValue: 999))
        send(.destinationClaimed(id, below(4) == 0 ? .failure(.destination(taken)) : .success(())))
    }

    mutating func tick(_ below: (Int) -> Int) {
        let activities = driver.core.jobs.values.filter { $0.phase == .attempt }.sorted { $0.id < $1.id }.map {
            SchedulerEvent.Activity(id: $0.id, attempt: $0.job.attempts, idleSeconds: Double(below(120)),
                                    throttled: below(3) == 0, stallSeconds: 60)
        }
        send(.tick(activities))
    }

    mutating func waitOrDrop(_ below: (Int) -> Int) {
        if below(5) == 0, let owner = waitOwner.values.sorted().first {
            for (token, candidate) in waitOwner where candidate == owner { dropped.insert(token) }
            return send(.waitsDropped(owner: owner))
        }
        let ids = Set(known.keys.filter { _ in below(2) == 0 })
        guard !ids.isEmpty else { return }
        let token = 10_000 + waits.count
        waits.insert(token)
        waitOwner[token] = below(3)
        // What the store says has ended: recorded ends only (a job whose end is on its way is not).
        let ended = ids.compactMap { id in
            driver.core.jobs[id] == nil && driver.core.ending[id] == nil && (state[id]?.hasEnded ?? false) ? known[id] : nil
        }
        send(.wait(token: token, owner: waitOwner[token]!, ids: ids, ended: ended))
    }

    // MARK: Checks

    /// Checks the actions of the last event, then the core's caps.
    mutating func check() {
        let new = driver.actions[seen...]
        seen = driver.actions.count
        for action in new {
            switch action {
            case .record(let record), .startAttempt(let record, _): checkRecord(record)
            case .batchEnded(let batch, _): checkBatchEnd(batch)
            default: break
            }
        }
        let running = driver.core.admission.running
        #expect(running.count <= driver.core.settings.maxActive, "\(where_): \(running.count) running")
        var byHost: [String: Int] = [:]
        for slot in running.values { byHost[slot.host, default: 0] += 1 }
        #expect(byHost.values.allSatisfy { $0 <= driver.core.settings.maxPerHost }, "\(where_): host cap passed")
        let finishing = driver.core.admission.finishing
        #expect(running.count + finishing.count <= driver.core.settings.maxActive + driver.core.admission.maxFinishing,
                "\(where_): too many files open")
        for (id, record) in driver.core.jobs where record.job.state == .running {
            if case .finalizing = record.phase, finishing.contains(id) { continue }
            #expect(running[id] != nil, "\(where_): job \(id) runs without a slot")
        }
        for id in finishing {
            guard case .finalizing = driver.core.jobs[id]?.phase else {
                Issue.record("\(where_): job \(id) keeps a finishing place while not finalizing")
                continue
            }
        }
    }

    private mutating func checkRecord(_ record: StateRecord) {
        let id = record.id
        let old = state[id]
        #expect(old.map { $0.canTransition(to: record.change.state) } ?? false,
                "\(where_): job \(id) \(String(describing: old)) -> \(record.change.state)")
        state[id] = record.change.state
        if let job = driver.core.job(id) { known[id] = job }
        if !record.change.state.hasEnded, let batch = known[id]?.batch { batchEndedSinceUnfinished[batch] = false }
        // A job's durable bytes never go backwards, except when it starts over or its bytes are discarded.
        let restarted = record.attempt?.error?.code == "source_changed" || record.resume == .delete
        switch record.resume {
        case .save(let resume):
            #expect(resume.bytesDurable >= durable[id, default: 0] || restarted,
                    "\(where_): job \(id) went back from \(durable[id, default: 0]) to \(resume.bytesDurable)")
            durable[id] = resume.bytesDurable
        case .delete:
            durable[id] = 0
        case .none:
            break
        }
        if let bytes = record.change.bytesDone, known[id]?.kind == .download, record.change.state != .completed {
            #expect(bytes >= durable[id, default: 0] || restarted, "\(where_): job \(id) recorded \(bytes) bytes")
        }
        if restarted { written[id] = durable[id] ?? 0 }
    }

    private mutating func checkBatchEnd(_ batch: Int64) {
        let jobs = known.values.filter { $0.batch == batch }
        #expect(jobs.allSatisfy { state[$0.id]?.hasEnded ?? false }, "\(where_): batch \(batch) ended with a job unfinished")
        #expect(!driver.unrecorded.contains { known[$0.id]?.batch == batch && $0.change.state.hasEnded },
                "\(where_): batch \(batch) ended with an end unrecorded")
        #expect(batchEndedSinceUnfinished[batch] != true, "\(where_): batch \(batch) ended twice")
        batchEndedSinceUnfinished[batch] = true
    }

    // MARK: The end of a run

    /// Cancels what is left and lets everything finish: then every wait and command is answered.
    mutating func drain() {
        step = -1
        for round in 0..<50 {
            for (id, record) in driver.core.jobs.sorted(by: { $0.key < $1.key }) {
                switch record.phase {
                case .stopping: stopped(id, withTransfer: false, grow: 0)
                case .finalizing: finalized(id, .success(0), recordedWithIt: round % 2 == 0)
                case .idle, .attempt, .claiming: command(.cancel, id)
                }
            }
            while !pendingClaims.isEmpty {
                send(.destinationClaimed(pendingClaims.removeFirst(), .success(())))
            }
            while !driver.unrecorded.isEmpty {
                driver.recordNext()
                check()
            }
            if driver.core.jobs.isEmpty { break }
            #expect(round < 49, "seed \(seed): the core did not drain")
        }
        #expect(driver.core.ending.isEmpty, "seed \(seed): ends left unrecorded")
        for token in waits.subtracting(dropped) {
            #expect(driver.answers[token] != nil, "seed \(seed): wait \(token) was never answered; \(driver.core.waiters.map { ($0.token, $0.remaining) }) ")
        }
        for token in asked {
            #expect(driver.acks[token] != nil, "seed \(seed): command \(token) was never answered")
        }
    }
}
