/// The daemon-wide limits: a rate per direction and an optional timetable that overrides them
/// while one of its entries applies. Persisted in the `settings` table.
public struct LimitSettings: Equatable, Sendable {
    public var down: Int64?
    public var up: Int64?
    public var schedule: LimitSchedule?

    public init(down: Int64? = nil, up: Int64? = nil, schedule: LimitSchedule? = nil) {
        self.down = down
        self.up = up
        self.schedule = schedule
    }

    /// The limits in force at `time`, and the timetable entry that decided them.
    public func effective(at time: LimitSchedule.LocalTime) -> (down: Int64?, up: Int64?, entry: LimitSchedule.Entry?) {
        guard let entry = schedule?.active(at: time) else { return (down, up, nil) }
        return (Self.apply(entry.down, over: down), Self.apply(entry.up, over: up), entry)
    }

    /// An entry's setting for one direction: absent leaves the base rate, present replaces it
    /// (`.some(nil)` is unlimited).
    private static func apply(_ setting: Int64??, over base: Int64?) -> Int64? {
        if let setting { return setting }
        return base
    }

    // MARK: Persistence

    private enum Key {
        static let down = "limit_down"
        static let up = "limit_up"
        static let schedule = "limit_schedule"
    }

    /// The stored limits; a stored value that is not a valid rate or timetable is left out
    /// (unlimited, no timetable) and reported through `ignored`, never reinterpreted.
    public static func load(from store: JobStore, ignored: (String) -> Void) throws -> LimitSettings {
        var settings = LimitSettings()
        func rate(_ key: String) throws -> Int64? {
            guard let text = try store.setting(key) else { return nil }
            do {
                return try NumericLimits.rate.parse(text, "setting \(key)")
            } catch {
                ignored("\(error.message); using no limit")
                return nil
            }
        }
        settings.down = try rate(Key.down)
        settings.up = try rate(Key.up)
        if let text = try store.setting(Key.schedule) {
            do {
                settings.schedule = try LimitSchedule.parse(text)
            } catch {
                ignored("setting \(Key.schedule) is not a timetable (\(error.message)); using none")
            }
        }
        return settings
    }

    public func save(to store: JobStore) throws {
        try store.transaction {
            try store.setSetting(Key.down, down.map(String.init))
            try store.setSetting(Key.up, up.map(String.init))
            try store.setSetting(Key.schedule, schedule?.text)
        }
    }
}
