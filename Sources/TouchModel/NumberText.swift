/// A number as people and JSON write it: whole numbers without ".0", others in Swift's
/// shortest round-trip form (valid JSON).
public func compactNumber(_ value: Double) -> String {
    if value == value.rounded(), Swift.abs(value) < 1e15 { return String(Int64(value)) }
    return "\(value)"
}
