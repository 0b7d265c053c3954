/// Arithmetic on durations, rates, sizes and counts that holds at the type's bounds instead of
/// trapping: a number that slipped past every check makes a wrong wait or total, never a crash.
extension FixedWidthInteger {
    /// `self + other`, or the bound it ran past.
    public func saturatingAdd(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, or the bound it ran past.
    public func saturatingSubtract(_ other: Self) -> Self {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other > 0 ? .min : .max
    }

    /// `self * other`, or the bound it ran past.
    public func saturatingMultiply(_ other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }

    /// `value` rounded toward zero, held at the type's bounds (0 for NaN).
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            self = .max
        } else if value <= Double(Self.min) {
            self = .min
        } else {
            self = Self(value)
        }
    }
}
