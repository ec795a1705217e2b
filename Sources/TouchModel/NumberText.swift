/// A number as people and JSON write it: whole numbers without ".0", others in Swift's
/// shortest round-trip form (valid JSON).
public func compactNumber(_ value: Double) -> String {
    if let whole = wholeNumber(value) { return String(whole) }
    return "\(value)"
}

/// `value` as the integer ``compactNumber(_:)`` writes it as, or nil when it writes a
/// fraction or an exponent (beyond 10¹⁵ a double's digits are not all exact).
public func wholeNumber(_ value: Double) -> Int64? {
    value == value.rounded() && Swift.abs(value) < 1e15 ? Int64(value) : nil
}
