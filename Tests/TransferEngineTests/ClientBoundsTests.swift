import Foundation
import Testing
@testable import TransferEngine

/// The bounds that keep one control client from taking the daemon's memory or descriptors.
@Suite struct ConnectionFlowTests {
    @Test func stopsAboveTheHighWaterMarkUntilBelowTheLowOne() {
        var flow = ConnectionFlow()
        flow.queued(ConnectionFlow.highWater)
        #expect(flow.mayTakeRequest, "at the mark, not above it")
        flow.queued(ConnectionFlow.highWater + 1)
        #expect(!flow.mayTakeRequest)
        flow.queued(ConnectionFlow.lowWater)
        #expect(!flow.mayTakeRequest, "drains to below the low mark before reading again")
        flow.queued(ConnectionFlow.lowWater - 1)
        #expect(flow.mayTakeRequest)
        flow.queued(ConnectionFlow.highWater)
        #expect(flow.mayTakeRequest, "between the marks, reading goes on")
    }

    @Test func boundsTheRequestsInProgress() {
        var flow = ConnectionFlow()
        for _ in 0..<ConnectionFlow.maxInProgress { flow.requestStarted() }
        #expect(!flow.mayTakeRequest)
        flow.requestAnswered()
        #expect(flow.mayTakeRequest)
        #expect(flow.inProgress == ConnectionFlow.maxInProgress - 1)
    }
}

@Suite struct ManifestStagingTests {
    func entries(_ count: Int) -> [ManifestEntry] {
        (0..<count).map { ManifestEntry(line: $0 + 1, job: NewJob(kind: .download, url: "http://h/\($0)", path: "/d/\($0)")) }
    }

    @Test func holdsChunksUntilTheFinalOneAndThenForgetsThem() throws {
        var staging = ManifestStaging()
        #expect(try staging.add(entries(2), bytes: 100, connection: 1, token: "a", final: false) == .staged(2))
        #expect(try staging.add(entries(3), bytes: 100, connection: 1, token: "a", final: false) == .staged(5))
        #expect(try staging.add(entries(1), bytes: 100, connection: 2, token: "a", final: false) == .staged(1),
                "the same token on another connection is another manifest")
        #expect(staging.entries == 6 && staging.bytes == 300)
        #expect(staging.close(connection: 1, token: "a") == nil, "a manifest whose final chunk has not come stays")
        #expect(try staging.add(entries(1), bytes: 50, connection: 1, token: "a", final: true) == .closing(6))
        #expect(staging.entries == 7 && staging.bytes == 350, "held until its checks are back")
        #expect(throws: JobRefusal.self, "no chunk after the final one") {
            try staging.add(entries(1), bytes: 1, connection: 1, token: "a", final: false)
        }
        let closed = staging.close(connection: 1, token: "a")
        #expect(closed?.0.count == 6)
        #expect(staging.entries == 1 && staging.bytes == 100)
        #expect(staging.close(connection: 1, token: "a") == nil)
    }

    @Test func keepsTheChecksOfEachChunkInOrderWithItsManifestUntilTheFinalChunk() throws {
        var staging = ManifestStaging()
        let first = entries(2)
        let second = entries(3)
        _ = try staging.add(first, bytes: 10, connection: 1, token: "a", final: false)
        _ = try staging.add(second, bytes: 10, connection: 1, token: "a", final: false)
        // The second chunk's checks before the first's are not kept: they would leave a gap.
        staging.checked(ManifestChecks.check(second, from: 2, umask: 0o22), connection: 1, token: "a")
        staging.checked(ManifestChecks.check(first, from: 0, umask: 0o22), connection: 1, token: "a")
        staging.checked(ManifestChecks.check(first, from: 0, umask: 0o22), connection: 2, token: "a")  // no such manifest
        let last = entries(1)
        #expect(try staging.add(last, bytes: 10, connection: 1, token: "a", final: true) == .closing(6))
        // Checks still coming after the final chunk are kept until the manifest is closed.
        staging.checked(ManifestChecks.check(second, from: 2, umask: 0o22), connection: 1, token: "a")
        staging.checked(ManifestChecks.check(last, from: 5, umask: 0o22), connection: 1, token: "a")
        let checks = staging.close(connection: 1, token: "a")?.1
        #expect(checks?.count == 6 && checks?.umask == 0o22)
        staging.checked(ManifestChecks.check(second, from: 2, umask: 0o22), connection: 1, token: "a")  // queued already
        #expect(staging.entries == 0)
    }

    @Test func rowsAreMadeWhileFewEntriesAreHeldAndKeptWithTheFirstChecksRetries() throws {
        var staging = ManifestStaging()
        _ = try staging.add(entries(2), bytes: 10, connection: 1, token: "a", final: false)
        #expect(staging.preparesRows)
        _ = try staging.add(entries(1), bytes: ManifestStaging.maxPreparedBytes, connection: 2, token: "b", final: false)
        #expect(!staging.preparesRows, "past the bytes held")
        var checks = ManifestChecks.check(entries(2), from: 0, umask: 0o22, defaultRetries: 3)
        checks.append(ManifestChecks.check(entries(2), from: 2, umask: 0o22))  // checked, no rows made
        checks.append(ManifestChecks.check(entries(2), from: 4, umask: 0o22, defaultRetries: 3))
        checks.append(ManifestChecks.check(entries(2), from: 6, umask: 0o22, defaultRetries: 5))
        #expect(checks.count == 8)
        #expect((0..<8).map { checks.row(at: $0, umask: 0o22, defaultRetries: 3) != nil }
                == [true, true, false, false, true, true, false, false])
        #expect(checks.row(at: 0, umask: 0o77, defaultRetries: 3) == nil, "made with another umask")
    }

    @Test func refusesAChunkPastAConnectionsBytesAndDropsItsManifest() throws {
        var staging = ManifestStaging()
        let half = ManifestStaging.maxBytesPerConnection / 2
        _ = try staging.add(entries(1), bytes: half, connection: 1, token: "a", final: false)
        _ = try staging.add(entries(1), bytes: half, connection: 1, token: "b", final: false)
        #expect(throws: JobRefusal.self) {
            try staging.add(entries(1), bytes: 1, connection: 1, token: "a", final: false)
        }
        #expect(staging.bytes == half, "manifest a is gone, b stays")
        #expect(try staging.add(entries(1), bytes: half, connection: 2, token: "a", final: false) == .staged(1),
                "another connection has its own bound")
    }

    @Test func refusesChunksPastTheTotalBytesOrEntries() throws {
        var staging = ManifestStaging()
        let connections = ManifestStaging.maxBytes / ManifestStaging.maxBytesPerConnection + 1
        let share = ManifestStaging.maxBytes / connections
        for connection in 0..<connections {
            _ = try staging.add(entries(1), bytes: share, connection: connection, token: "t", final: false)
        }
        do {
            _ = try staging.add(entries(1), bytes: ManifestStaging.maxBytes - staging.bytes + 1, connection: 99, token: "t",
                                final: true)
            Issue.record("past the total")
        } catch {
            #expect(ControlError(error).code == .tooLarge)
            #expect(error.message.contains("waiting for their last chunk"))
        }
        var counted = ManifestStaging()
        _ = try counted.add(entries(ManifestStaging.maxEntries), bytes: 1, connection: 1, token: "t", final: false)
        #expect(throws: JobRefusal.self) { try counted.add(entries(1), bytes: 1, connection: 2, token: "t", final: false) }
    }

    @Test func dropsAConnectionsChunksWhenItCloses() throws {
        var staging = ManifestStaging()
        _ = try staging.add(entries(4), bytes: 400, connection: 1, token: "a", final: false)
        _ = try staging.add(entries(2), bytes: 200, connection: 1, token: "b", final: false)
        _ = try staging.add(entries(1), bytes: 100, connection: 2, token: "a", final: false)
        staging.drop(connection: 1)
        #expect(staging.entries == 1 && staging.bytes == 100)
        #expect(try staging.add(entries(1), bytes: 1, connection: 1, token: "a", final: false) == .staged(1),
                "a new manifest starts from nothing")
    }
}

@Suite struct DescriptorBudgetTests {
    @Test func keepsAReserveAndGivesConnectionsHalfOfTheRest() {
        let tight = DescriptorBudget(limit: 256, maxActive: 4)
        #expect(tight.finishing == 26, "half of 256 - (64 + 8 × 4) for the downloads finishing, 3 each")
        #expect(tight.reserve == 174, "64 + 8 × 4 for the transfers + 3 × 26 for the downloads finishing beside them")
        #expect(tight.connections == 41)
        #expect(DescriptorBudget(limit: 1024, maxActive: 4).connections == 256, "at most 256")
        #expect(DescriptorBudget(limit: 40, maxActive: 16).connections == 8, "at least 8")
        #expect(DescriptorBudget(limit: 1500, maxActive: 100).connections == 159, "(1500 - 64 - 8 × 100 - 3 × 106) / 2")
        #expect(DescriptorBudget(limit: Int.max, maxActive: 4).connections == 256)
    }

    @Test func givesEachSlotBetweenOneAndThirtyOneDownloadsFinishing() {
        #expect(DescriptorBudget(limit: 1024, maxActive: 4).finishing == 124, "31 per slot: descriptors are plenty")
        #expect(DescriptorBudget(limit: 20_000, maxActive: 16).finishing == 496)
        #expect(DescriptorBudget(limit: 40, maxActive: 16).finishing == 16, "one per slot however few descriptors")
        #expect(DescriptorBudget(limit: 1500, maxActive: 100).finishing == 106, "half of what the transfers leave")
        let documented = [(256, 4), (1024, 4), (4096, 100), (1024, 100)].map { DescriptorBudget(limit: $0, maxActive: $1) }
        #expect(documented.map { [$0.finishing, $0.reserve, $0.connections] }
                == [[26, 174, 41], [124, 468, 256], [538, 2478, 256], [100, 1164, 8]], "docs/control-protocol.md's table")
    }
}

@Suite struct RequestIDTests {
    @Test func dropsRepeatedIDsKeepingTheirOrder() throws {
        var request = ControlRequest(.wait, ids: [3, 1, 3, 3, 2, 1].map { JobID(rawValue: $0) })
        try request.normalizeIDs()
        #expect(request.ids == [3, 1, 2].map { JobID(rawValue: $0) })
    }

    @Test func refusesMoreIDsThanTheMaximum() throws {
        let one = JobID(rawValue: 1)
        var most = ControlRequest(.pause, ids: Array(repeating: one, count: ControlRequest.maxIDs))
        try most.normalizeIDs()
        #expect(most.ids == [one])
        var many = ControlRequest(.pause, ids: Array(repeating: one, count: ControlRequest.maxIDs + 1))
        #expect(throws: ControlError(.tooLarge, "a request may name at most 100000 job ids, got 100001")) {
            try many.normalizeIDs()
        }
    }
}

@Suite struct DescriptorShortageTests {
    @Test func aFileOperationShortOfDescriptorsIsAShortageNotAnIOError() {
        let shortage = TransferError.file(path: "/d/.f.transferd-part", operation: "create", errno: EMFILE)
        #expect(shortage.code == "fd_shortage")
        #expect(shortage.message.hasPrefix("cannot create /d/.f.transferd-part: Too many open files"))
        #expect(TransferError.file(path: "/d", operation: "open", errno: ENFILE).code == "fd_shortage")
        #expect(TransferError.file(path: "/d", operation: "write", errno: ENOSPC) == .diskFull(path: "/d"))
        #expect(TransferError.file(path: "/d", operation: "open", errno: EACCES) == .io(path: "/d", operation: "open", errno: EACCES))
        #expect(RetryPolicy().isRetryable(shortage))
    }
}
