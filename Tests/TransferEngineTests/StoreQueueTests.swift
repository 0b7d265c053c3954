import Dispatch
import Foundation
import Synchronization
import Testing
@testable import TransferEngine

@Suite struct StoreQueueTests {
    let directory = TemporaryDirectory()

    private struct Boom: Error, Equatable {
        var tag: Int
    }

    private func newJob(_ name: String) -> NewJob {
        NewJob(kind: .download, url: "http://127.0.0.1/\(name)", path: directory.file(name))
    }

    /// A queue over a fresh store; the store itself is only touched through the queue after this.
    private func makeQueue() throws -> (StoreQueue, String) {
        let path = directory.database("t.db")
        return (StoreQueue(try JobStore(path: path)), path)
    }

    /// Jobs with this URL as another connection sees them (committed rows only).
    private static func committedCount(_ databasePath: String, url: String) throws -> Int {
        let connection = try SQLiteConnection(path: databasePath)
        return try connection.query("SELECT count(*) FROM jobs WHERE url = ?", [url]) { $0.int() }.first ?? 0
    }

    @Test func aloneRunsAfterWhatWasQueuedBeforeItOutsideAnyTransaction() throws {
        let (queue, path) = try makeQueue()
        let order = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let base = directory.path
        for index in 0..<3 {
            // The last one may wait for its window: `alone` does not.
            queue.async({ store in _ = try store.insert(NewJob(kind: .download, url: "http://h/\(index)",
                                                                path: base + "/f\(index)"), maxRetries: 0, resume: nil) },
                        deferrable: index == 2) { _ in
                order.withLock { $0.append("piece \(index)") }
            }
        }
        queue.alone({ store -> Bool in store.connection.inTransaction }) { result in
            order.withLock { $0.append("alone in a transaction: \((try? result.get()) ?? true)") }
            done.signal()
        }
        done.wait()
        #expect(order.withLock { $0 } == ["piece 0", "piece 1", "piece 2", "alone in a transaction: false"])
        #expect(try JobStore(path: path).jobs().count == 3)
    }

    @Test func syncReturnsTheValueOnceDurable() throws {
        let (queue, path) = try makeQueue()
        let job = newJob("a")
        let inserted = try queue.sync { store in try store.insert(job, maxRetries: 2, resume: nil) }
        #expect(inserted.url == job.url)
        #expect(inserted.maxRetries == 2)
        #expect(try queue.sync { store in try store.job(inserted.id)?.path } == job.path)
        #expect(try JobStore(path: path).job(inserted.id) == inserted)
        #expect(try queue.sync { _ in 42 } == 42)
    }

    @Test func syncRethrowsTheWorksErrorAndKeepsNothingOfIt() throws {
        let (queue, path) = try makeQueue()
        let job = newJob("a")
        #expect(throws: Boom(tag: 7)) {
            try queue.sync { store -> Int in
                _ = try store.insert(job, maxRetries: 0, resume: nil)
                throw Boom(tag: 7)
            }
        }
        #expect(try JobStore(path: path).jobs().isEmpty)
    }

    @Test func manyPiecesFromSeveralThreadsAllCompleteWithTheirOwnResults() throws {
        let (queue, path) = try makeQueue()
        let threads = 8
        let perThread = 40
        let results = Mutex<[Int: Result<Int64, any Error>]>([:])
        let group = DispatchGroup()
        let base = directory.path
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                let tag = thread * 1000 + index
                let job = NewJob(kind: .download, url: "http://127.0.0.1/\(tag)", path: base + "/\(tag)")
                group.enter()
                queue.async({ store in try store.insert(job, maxRetries: tag % 5, resume: nil).id.rawValue }) { result in
                    results.withLock { $0[tag] = result }
                    group.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let collected = results.withLock { $0 }
        #expect(collected.count == threads * perThread)
        let reader = try JobStore(path: path)
        var ids: Set<Int64> = []
        for (tag, result) in collected {
            let id = try result.get()
            ids.insert(id)
            // Each completion got the id of its own row.
            let job = try #require(try reader.job(JobID(rawValue: id)))
            #expect(job.url == "http://127.0.0.1/\(tag)")
            #expect(job.maxRetries == tag % 5)
        }
        #expect(ids.count == threads * perThread)
        #expect(try reader.jobs(limit: 10_000).count == threads * perThread)
    }

    /// Holds the store's queue busy until `release` is signalled, so later pieces form one group.
    private func block(_ queue: StoreQueue) -> DispatchSemaphore {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        queue.async({ _ in
            started.signal()
            release.wait()
        }, completion: { _ in })
        started.wait()
        return release
    }

    /// A piece that throws rolls its group back; each piece then runs again in a transaction of
    /// its own: the failing ones fail alone, and the others are recorded, each once.
    @Test func aPieceThatThrowsFailsAloneAndTheRestOfItsGroupIsRecorded() throws {
        let (queue, path) = try makeQueue()
        let release = block(queue)
        let results = Mutex<[String: Result<Int64, any Error>]>([:])
        let runs = Mutex<[String: Int]>([:])
        let group = DispatchGroup()
        for name in ["a", "b", "c", "d"] {
            let job = newJob(name)
            group.enter()
            queue.async({ store in
                runs.withLock { $0[name, default: 0] += 1 }
                let id = try store.insert(job, maxRetries: 0, resume: nil).id.rawValue
                if name == "b" || name == "d" { throw Boom(tag: Int(id)) }
                return id
            }) { result in
                results.withLock { $0[name] = result }
                group.leave()
            }
        }
        release.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        let collected = results.withLock { $0 }
        // Once in the group (up to the first failure), once alone.
        #expect(runs.withLock { $0 } == ["a": 2, "b": 2, "c": 1, "d": 1])
        #expect(throws: Boom.self) { try collected["b"]?.get() }
        #expect(throws: Boom.self) { try collected["d"]?.get() }
        let reader = try JobStore(path: path)
        for name in ["a", "c"] {
            let id = try #require(try collected[name]?.get())
            #expect(try reader.job(JobID(rawValue: id))?.url == "http://127.0.0.1/\(name)")
        }
        #expect(Set(try reader.jobs().map(\.url)) == ["http://127.0.0.1/a", "http://127.0.0.1/c"])
        #expect(try reader.integrityCheck() == "ok")
    }

    @Test func completionsRunOnceTheGroupIsVisibleToOtherConnections() throws {
        let (queue, path) = try makeQueue()
        let release = block(queue)
        let seen = Mutex<[String: [String]]>([:])
        let group = DispatchGroup()
        let names = ["a", "b", "c"]
        for name in names {
            let job = newJob(name)
            group.enter()
            queue.async({ store in try store.insert(job, maxRetries: 0, resume: nil).id }) { result in
                // A fresh store on the same file sees every piece of the group, not only this one.
                let urls = (try? JobStore(path: path).jobs().map(\.url)) ?? ["unreadable: \(result)"]
                seen.withLock { $0[name] = urls.sorted() }
                group.leave()
            }
        }
        release.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        let everything = names.map { "http://127.0.0.1/\($0)" }
        #expect(seen.withLock { $0 } == ["a": everything, "b": everything, "c": everything])
    }

    @Test func aCompletionSeesItsOwnWriteWhenAlone() throws {
        let (queue, path) = try makeQueue()
        let job = newJob("solo")
        let found = Mutex<Job?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async({ store in try store.insert(job, maxRetries: 1, resume: nil).id }) { result in
            if case .success(let id) = result {
                found.withLock { $0 = try? JobStore(path: path).job(id) }
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(found.withLock { $0 }?.url == job.url)
    }

    @Test func deferrableWorkGathersBeforeItCommits() throws {
        let (queue, _) = try makeQueue()
        let done = DispatchSemaphore(value: 0)
        let queued = DispatchTime.now()
        let committed = Mutex<DispatchTime?>(nil)
        queue.async({ _ in }, deferrable: true) { _ in
            committed.withLock { $0 = .now() }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let waited = try #require(committed.withLock { $0 }).uptimeNanoseconds - queued.uptimeNanoseconds
        guard case .milliseconds(let gathering) = StoreQueue.gathering else { Issue.record("a window in milliseconds"); return }
        #expect(waited >= UInt64(gathering) * 1_000_000, "no commit before the window closes")
        #expect(try queue.sync { _ in 7 } == 7, "the queue goes on after a deferred drain")
    }

    @Test func workThatIsWaitedOnTakesDeferrableWorkAlongInItsCommit() throws {
        let (queue, path) = try makeQueue()
        let seen = Mutex<[String: [String]]>([:])
        let group = DispatchGroup()
        for (name, deferrable) in [("later", true), ("now", false)] {
            let job = newJob(name)
            group.enter()
            queue.async({ store in try store.insert(job, maxRetries: 0, resume: nil).id }, deferrable: deferrable) { _ in
                let urls = (try? JobStore(path: path).jobs().map(\.url)) ?? []
                seen.withLock { $0[name] = urls.sorted() }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        let both = ["http://127.0.0.1/later", "http://127.0.0.1/now"]
        #expect(seen.withLock { $0 } == ["later": both, "now": both], "one group, one commit")
        // The drain scheduled for the gathered work finds it gone, and the queue goes on.
        #expect(try queue.sync { store in try store.jobs().count } == 2)
    }

    @Test func commitWaitingCommitsDeferrableWorkWithoutItsWindow() throws {
        let (queue, path) = try makeQueue()
        let job = newJob("gathering")
        queue.async({ store in _ = try store.insert(job, maxRetries: 0, resume: nil) }, deferrable: true) { _ in }
        #expect(queue.commitWaiting(within: .seconds(30)))
        #expect(try Self.committedCount(path, url: job.url) == 1, "committed before commitWaiting returned")
        let release = block(queue)
        #expect(!queue.commitWaiting(within: .milliseconds(50)), "a store that does not answer in time")
        release.signal()
    }

    @Test func piecesRunInSubmissionOrder() throws {
        let (queue, _) = try makeQueue()
        let order = Mutex<[Int]>([])
        let group = DispatchGroup()
        for index in 0..<50 {
            group.enter()
            queue.async({ _ in order.withLock { $0.append(index) } }) { _ in group.leave() }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(order.withLock { $0 } == Array(0..<50))
    }
}
