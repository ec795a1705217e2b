import TouchModel

/// How motiond uses a touchscreen it reads: where its touches land, how its contacts are
/// filtered, and whether it holds the device for itself. What `devices` shows of a device,
/// as it was opened or as the last reload left it.
public struct DeviceSetup: Sendable, Hashable {
    /// The rectangle of the screen the device covers, in pixels.
    public var output: Rect
    /// The contact filters as they apply to the device, in its believed geometry.
    public var filters: ResolvedContactFilters
    /// Rotation, flips and calibration: what `motionctl calibrate` needs to place targets.
    public var mapping: OutputMapping
    /// Whether motiond grabbed the device (`EVIOCGRAB`): then nothing else receives its events.
    public var grabbed: Bool

    /// A setup with every part given.
    public init(output: Rect, filters: ResolvedContactFilters, mapping: OutputMapping = OutputMapping(), grabbed: Bool = false) {
        self.output = output
        self.filters = filters
        self.mapping = mapping
        self.grabbed = grabbed
    }

    /// How `device` is used now.
    public init(_ device: TouchDevice) {
        self.init(output: device.assembler.mapper.outputRect, filters: device.assembler.resolvedFilters, mapping: device.assembler.mapper.mapping, grabbed: device.isGrabbed)
    }

    /// How a device described by `description` is used when mapped by `mapping` and filtered
    /// by `filters`, without being opened: a recording's device, which nobody grabs. The
    /// description has position axes, as every device motiond reads does (a recording
    /// without them is refused before it is replayed).
    public init(_ description: DeviceDescription, mapping: OutputMapping, filters: ContactFilterSettings) {
        let axes = description.positionAxes!
        self.init(output: CoordinateMapper(xAxis: axes.x, yAxis: axes.y, mapping: mapping).outputRect,
                  filters: ResolvedContactFilters(filters, device: description, mapping: mapping), mapping: mapping)
    }
}
