import TouchModel

/// How the compositor turns the output a virtual touchscreen is mapped to (Wayland's
/// `wl_output.transform`): weston's `transform=rotate-90` or sway's `output … transform 90`
/// for a display hung in portrait.
///
/// A compositor that turns the output places a touchscreen's touch within the output's own,
/// unturned mode and then turns it with the picture, as it must for a touchscreen glued to the
/// display: weston 10 does (`weston_output_transform_coordinate`). motiond's positions are in
/// its `[screen]`, the picture as shown, so the virtual touchscreen reports each in the
/// output's unturned frame (``devicePoint(of:in:)``), and the compositor's turn brings it back
/// under the finger.
public enum OutputTransform: String, Sendable, Hashable, CaseIterable {
    case normal
    case rotated90 = "90"
    case rotated180 = "180"
    case rotated270 = "270"
    case flipped
    case flipped90 = "flipped-90"
    case flipped180 = "flipped-180"
    case flipped270 = "flipped-270"

    /// The transform a name gives: Wayland's and sway's (`90`, `flipped-90`), or weston.ini's
    /// (`rotate-90`, `flipped-rotate-90`).
    public init?(name: String) {
        switch name {
        case "rotate-90", "rotate-180", "rotate-270": self.init(rawValue: String(name.dropFirst("rotate-".count)))
        case "flipped-rotate-90", "flipped-rotate-180", "flipped-rotate-270": self.init(rawValue: "flipped-" + name.dropFirst("flipped-rotate-".count))
        default: self.init(rawValue: name)
        }
    }

    /// Whether the output's unturned mode has the picture's width as its height.
    public var swapsAxes: Bool {
        switch self {
        case .rotated90, .rotated270, .flipped90, .flipped270: true
        case .normal, .rotated180, .flipped, .flipped180: false
        }
    }

    /// The size of the output's unturned mode, for a picture of `size`.
    public func deviceSize(of size: Size) -> Size {
        swapsAxes ? Size(width: size.height, height: size.width) : size
    }

    /// Where `point`, within a picture of `size` from its top-left corner, lies in the output's
    /// unturned mode: the inverse of the turn the compositor gives a touch (libweston's
    /// buffer-transform convention, `wl_output` transforms counter-clockwise).
    public func devicePoint(of point: Point, in size: Size) -> Point {
        let (x, y, width, height) = (point.x, point.y, size.width, size.height)
        switch self {
        case .normal: return Point(x: x, y: y)
        case .rotated90: return Point(x: y, y: width - x)
        case .rotated180: return Point(x: width - x, y: height - y)
        case .rotated270: return Point(x: height - y, y: x)
        case .flipped: return Point(x: width - x, y: y)
        case .flipped90: return Point(x: y, y: x)
        case .flipped180: return Point(x: x, y: height - y)
        case .flipped270: return Point(x: height - y, y: width - x)
        }
    }
}
