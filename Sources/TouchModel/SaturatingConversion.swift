extension FixedWidthInteger {
    /// `value` rounded toward zero and held within the type's range; 0 for NaN.
    ///
    /// `Int(_:)` of a Double traps on NaN, an infinity or a value past the type's range, and
    /// the numbers motiond converts come from outside (a configuration's sizes, a recording's
    /// times, a device's values): a conversion that a value can make trap stops the daemon.
    /// What such a value means is judged where it is read; this only keeps it from trapping.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = .min
        } else if value >= Double(Self.max) {
            // Double(Int64.max) rounds up to 2⁶³, which is past the range: hence `>=`.
            self = .max
        } else {
            self.init(value)
        }
    }
}
