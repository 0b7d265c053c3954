import Testing
@testable import TransferEngine

@Suite struct GatherScheduleTests {
    private enum Step {
        case add(deferrable: Bool)
        case drain(window: Int?)
    }

    private enum Answer: Equatable {
        case schedule(GatherSchedule.Drain?)
        case drains(Bool)
    }

    /// What a fresh schedule answers to each step in turn.
    private func answers(_ steps: [Step]) -> [Answer] {
        var schedule = GatherSchedule()
        return steps.map { step in
            switch step {
            case .add(let deferrable): .schedule(schedule.add(deferrable: deferrable))
            case .drain(let window): .drains(schedule.drains(window: window))
            }
        }
    }

    @Test func deferrableWorkOpensAWindowThatLaterWorkJoins() {
        #expect(answers([.add(deferrable: true), .add(deferrable: true), .drain(window: 1), .add(deferrable: true)])
            == [.schedule(.after(window: 1)), .schedule(nil), .drains(true), .schedule(.after(window: 2))])
    }

    @Test func workWaitedOnDrainsAtOnceAndTakesTheWindowAlong() {
        #expect(answers([.add(deferrable: true), .add(deferrable: false), .add(deferrable: true), .add(deferrable: false),
                         .drain(window: nil)])
            == [.schedule(.after(window: 1)), .schedule(.now), .schedule(nil), .schedule(nil), .drains(true)])
    }

    /// The timer of a window whose work a drain at once took does nothing, and above all does
    /// not commit the next window's work before that window closes.
    @Test func aStaleWindowsTimerLeavesTheNextWindowAlone() {
        #expect(answers([.add(deferrable: true), .add(deferrable: false), .drain(window: nil), .add(deferrable: true),
                         .drain(window: 1), .drain(window: 2)])
            == [.schedule(.after(window: 1)), .schedule(.now), .drains(true), .schedule(.after(window: 2)),
                .drains(false), .drains(true)])
    }

    /// A drain that takes everything (`alone`, `commitWaiting`) closes the open window too.
    @Test func aDrainOfEverythingClosesTheOpenWindow() {
        #expect(answers([.add(deferrable: true), .drain(window: nil), .drain(window: 1), .add(deferrable: true)])
            == [.schedule(.after(window: 1)), .drains(true), .drains(false), .schedule(.after(window: 2))])
    }
}
