/// The range of every number transferd takes in, in one place: the command lines, the control
/// socket, manifests, resume-data files and the database check against these where the number
/// enters (docs/cli.md, "Limits"), so nothing later has to fear an overflow. Thread: constants; any.
public enum NumericLimits {
    /// Retries after a failed attempt (`--retry`, `retries`, a manifest's `retry`).
    public static let retries = NumericLimit<Int>(0...1000)
    /// A bandwidth limit in bytes per second: 1 TiB/s at most (`0`/`off`, unlimited, is not a rate).
    public static let rate = NumericLimit<Int64>(1...(1 << 40), unit: " bytes/s")
    /// Sizes and offsets in bytes (resume data, stored byte counts, a server's lengths): 4 EiB.
    public static let bytes = NumericLimit<Int64>(0...(1 << 62), unit: " bytes")
    /// Timeouts in seconds (`--stall-timeout`, `--no-progress-timeout`, `--hook-timeout`,
    /// `wait --timeout`, a server's Retry-After): a year at most.
    public static let timeoutSeconds = NumericLimit<Int>(1...(365 * 24 * 3600), unit: " seconds")
    /// How long ago a job ended, for `prune --older-than` and `transferd --keep-history`: 100
    /// years at most (36500d).
    public static let ageSeconds = NumericLimit<Int64>(0...(100 * 365 * 86_400), unit: " seconds")
    /// Transfers at once (`--max-active`, `--max-per-host`).
    public static let transfers = NumericLimit<Int>(1...1000)
    /// Job and batch ids.
    public static let id = NumericLimit<Int64>(1...Int64.max)
    /// Jobs in one page of `list`.
    public static let pageSize = NumericLimit<Int>(1...100_000)
    /// A file-mode creation mask (a client's umask).
    public static let umask = NumericLimit<Int>(0...0o777)
    /// Attempts a job has made.
    public static let attempts = NumericLimit<Int>(0...Int(Int32.max))
    /// A recorded HTTP status (0: none could be read).
    public static let httpStatus = NumericLimit<Int>(0...999)
    /// A stored instant in Unix milliseconds, up to the end of the year 9999.
    public static let time = NumericLimit<Int64>(0...253_402_300_799_999)
}

/// One documented range, and the checks against it. Thread: a value; any.
public struct NumericLimit<Value: FixedWidthInteger & Sendable>: Sendable {
    public let range: ClosedRange<Value>
    /// Printed after the bounds in messages, e.g. " seconds".
    public let unit: String

    public init(_ range: ClosedRange<Value>, unit: String = "") {
        self.range = range
        self.unit = unit
    }

    public func contains(_ value: Value) -> Bool { range.contains(value) }

    /// `value`, or an error naming `field`.
    public func check(_ value: Value, _ field: String) throws(OutOfRange) -> Value {
        guard range.contains(value) else { throw OutOfRange(field: field, value: String(value), limit: bounds) }
        return value
    }

    /// Any integer type, checked without converting first (an `Int64` retries count cannot trap).
    public func check<Other: BinaryInteger>(converting value: Other, _ field: String) throws(OutOfRange) -> Value {
        guard let exact = Value(exactly: value), range.contains(exact) else {
            throw OutOfRange(field: field, value: String(value), limit: bounds)
        }
        return exact
    }

    /// A decimal whole number from the command line or a stored setting.
    public func parse(_ text: String, _ field: String) throws(OutOfRange) -> Value {
        guard let value = Value(text), range.contains(value) else {
            throw OutOfRange(field: field, value: "'\(text)'", limit: bounds)
        }
        return value
    }

    /// A JSON number that may not be a whole one, or too large for any integer type.
    public func check(_ value: Double, _ field: String) throws(OutOfRange) -> Value {
        guard let exact = Value(exactly: value), range.contains(exact) else {
            throw OutOfRange(field: field, value: String(value), limit: bounds)
        }
        return exact
    }

    /// The nearest value in range (for numbers that are not taken in but computed from others).
    public func clamp(_ value: Value) -> Value { min(max(value, range.lowerBound), range.upperBound) }

    /// `from 0 to 1000 seconds`.
    public var bounds: String { "from \(range.lowerBound) to \(range.upperBound)\(unit)" }
}

/// A number outside its documented range (or not a whole number at all). Each entry point turns
/// it into its own error: exit 2 on the command line, `invalid_argument` on the socket, a line
/// error in a manifest, `invalid_job` for a stored row.
public struct OutOfRange: Error, Equatable, Sendable {
    /// The option, key or column, e.g. `--retry`, `retries`, `max_retries`.
    public var field: String
    /// The value as given.
    public var value: String
    /// `from 0 to 1000`.
    public var limit: String

    public var message: String { "\(field) must be a whole number \(limit), got \(value)" }
}
