/// The unit a panel's distances are measured in: millimetres where its size is believed,
/// pixels of its output where it is not (many panels declare no resolution, or a wrong one,
/// and a millimetre divided out of an unknown resolution means nothing).
public enum DistanceUnit: Hashable, Sendable {
    case millimetres
    case pixels

    /// The unit of a panel whose size is believed (`physical`) or not.
    public init(physical: Bool) {
        self = physical ? .millimetres : .pixels
    }

    public var isPhysical: Bool { self == .millimetres }
}

/// A distance in one unit: what a rule measures on one panel.
public struct Length: Hashable, Sendable {
    public var value: Double
    public var unit: DistanceUnit

    public init(_ value: Double, _ unit: DistanceUnit) {
        self.value = value
        self.unit = unit
    }

    public static func millimetres(_ value: Double) -> Length { Length(value, .millimetres) }
    public static func pixels(_ value: Double) -> Length { Length(value, .pixels) }
}

/// A distance a rule is given in both units, so that it holds on every panel: a slop, a
/// span, a radius. Which one applies is the panel's (``DistanceUnit``).
public struct PanelDistance: Hashable, Sendable {
    public var millimetres: Double
    public var pixels: Double

    public init(millimetres: Double, pixels: Double) {
        self.millimetres = millimetres
        self.pixels = pixels
    }

    /// The distance on a panel measured in `unit`.
    public func length(in unit: DistanceUnit) -> Length {
        Length(self[unit], unit)
    }

    /// The distance's number in `unit`.
    public subscript(unit: DistanceUnit) -> Double {
        unit == .millimetres ? millimetres : pixels
    }
}
