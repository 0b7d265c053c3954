import Testing
@testable import TransferEngine

/// What `events` (without --follow) answers from: the most recent events, oldest first.
@Suite struct EventBusTests {
    @Test func keepsTheMostRecentEventsOldestFirstAndNoProgress() {
        let bus = EventBus(logger: Logger(label: "test", level: .error))
        let total = EventBus.recentLimit * 5 + 7
        for id in 1...total {
            bus.publish(TransferEvent(.state, job: JobID(rawValue: Int64(id))))
            bus.publish(TransferEvent(.progress, job: JobID(rawValue: Int64(id))))
            #expect(bus.recent.count == min(id, EventBus.recentLimit))
        }
        let expected = (total - EventBus.recentLimit + 1...total).map { Int64($0) }
        #expect(bus.recent.map { $0.job?.rawValue } == expected)
    }
}
