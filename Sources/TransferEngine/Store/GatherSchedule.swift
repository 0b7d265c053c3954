/// When the store's next group commits: at once (work that someone waits on), or when a
/// gathering window closes (deferrable work only). A value; `StoreQueue` keeps it under its lock
/// and schedules the drain it returns. Windows are numbered: a drain that runs early takes the
/// window's work, and the window's timer, firing later, must not then commit the next window's
/// work before its time (it did: in a batch of small downloads, 457 windows for 497 drains,
/// most 0–3 ms apart instead of 5; BENCHMARKS.md).
struct GatherSchedule: Equatable {
    enum Drain: Equatable {
        case now
        case after(window: Int)
    }

    /// The drain scheduled and not yet run (nil: none).
    private(set) var due: Drain?
    private var windows = 0

    /// Work arrived: the drain to schedule for it, or nil when one already due as soon or
    /// sooner takes it along.
    mutating func add(deferrable: Bool) -> Drain? {
        switch (due, deferrable) {
        case (.now?, _), (.after?, true):
            return nil
        case (_, false):
            due = .now
        case (nil, true):
            windows += 1
            due = .after(window: windows)
        }
        return due
    }

    /// A drain is running — the timer of `window`, or (nil) one that takes everything at once.
    /// False when it has nothing to do: its window's work was taken by a drain before it.
    mutating func drains(window: Int?) -> Bool {
        if let window, due != .after(window: window) { return false }
        due = nil
        return true
    }
}
