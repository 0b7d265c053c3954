import FoundationEssentials

/// Reads the columns of a stored row with checks: integers within `NumericLimits`, words that
/// transferd writes, JSON that decodes. Every read gives back a value safe to use (out-of-range
/// numbers clamped, unknown words and unreadable JSON replaced by a default) and the first
/// problem is kept, so that a row nobody should have written is shown, and quarantined, instead
/// of crashing the daemon or being quietly read as something else. Thread: a value; any.
struct RowCheck {
    private(set) var problem: InvalidJob?

    mutating func note(_ column: String, _ reason: String) {
        if problem == nil { problem = InvalidJob(column: column, reason: reason) }
    }

    /// An integer column (nil for NULL).
    mutating func number<Value>(_ row: inout SQLiteRow, _ column: String, _ limit: NumericLimit<Value>) -> Value? {
        integer(&row, column).map { within($0, column, limit) }
    }

    /// A bandwidth limit: NULL, and 0 as raw clients once stored it, mean unlimited.
    mutating func rate(_ row: inout SQLiteRow, _ column: String) -> Int64? {
        guard let value = integer(&row, column), value != 0 else { return nil }
        return within(value, column, NumericLimits.rate)
    }

    /// The next column's integer; nil for NULL, and for text, a real or a blob (noted).
    private mutating func integer(_ row: inout SQLiteRow, _ column: String) -> Int64? {
        switch row.storedInteger() {
        case .success(let value):
            return value
        case .failure(let stored):
            note(column, "\(column) holds '\(stored.text)', not a whole number")
            return nil
        }
    }

    private mutating func within<Value>(_ value: Int64, _ column: String, _ limit: NumericLimit<Value>) -> Value {
        do {
            return try limit.check(converting: value, column)
        } catch {
            note(column, error.message)
            return limit.clamp(Value(clamping: value))
        }
    }

    /// A text column holding one of an enum's words.
    mutating func word<Word: RawRepresentable>(_ text: String, _ column: String, default fallback: Word) -> Word
    where Word.RawValue == String {
        guard let word = Word(rawValue: text) else {
            note(column, "\(column) '\(text)' is not a word transferd writes")
            return fallback
        }
        return word
    }

    /// A JSON column (nil stays nil).
    mutating func json<T: Decodable>(_ text: String?, _ type: T.Type, _ column: String) -> T? {
        guard let text else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            note(column, "\(column) is not valid: \(DecodingSummary.describe(error))")
            return nil
        }
    }

    /// A JSON array of strings; the empty one (most jobs' headers) read without a decoder.
    mutating func strings(_ text: String, _ column: String) -> [String]? {
        text == "[]" ? [] : json(text, [String].self, column)
    }

    /// A value found out of range after reading (e.g. the sizes inside a JSON column).
    mutating func check<Value>(_ value: Value, _ column: String, _ limit: NumericLimit<Value>) {
        do { _ = try limit.check(value, column) } catch { note(column, error.message) }
    }
}

/// Why a stored job cannot run: the column and what is wrong with it. Such a job is failed at
/// start with error code `invalid_job` (a typed reason) and cannot be retried; cancel it.
public struct InvalidJob: Error, Equatable, Sendable {
    /// The stable `error.code` of a quarantined job.
    public static let code = "invalid_job"

    /// The column, e.g. `max_retries` or `resume_data.bytes_durable`.
    public var column: String
    /// One line naming the column and its value.
    public var reason: String

    public var message: String { "the stored job cannot run: \(reason) (cancel it and queue it again)" }

    public var record: JobError { JobError(code: Self.code, message: message) }
}
