import TouchModel

/// How the compositor turns the output a virtual touchscreen is mapped to, for a display hung
/// in portrait: Wayland's `wl_output.transform` as weston names it (`transform=rotate-90`),
/// which sway names another way for a quarter turn (``swayName``).
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

    /// The turn as weston.ini writes it in the output's `[output]` section (`transform=`).
    public var westonName: String {
        switch self {
        case .normal, .flipped: rawValue
        case .rotated90, .rotated180, .rotated270: "rotate-" + rawValue
        case .flipped90, .flipped180, .flipped270: "flipped-rotate-" + rawValue.dropFirst("flipped-".count)
        }
    }

    /// The same turn as sway 1.7 (wlroots) writes it (`output NAME transform …`): sway turns
    /// a quarter turn the other way from weston, so that weston's `rotate-90` is sway's `270`
    /// (the compositor lab saw a touch at the device's x, y land at 1−y, x under weston's
    /// `rotate-90` and at y, 1−x under sway's `90`); a half turn and a flip are the same.
    public var swayName: String {
        switch self {
        case .rotated90: OutputTransform.rotated270.rawValue
        case .rotated270: OutputTransform.rotated90.rawValue
        case .flipped90: OutputTransform.flipped270.rawValue
        case .flipped270: OutputTransform.flipped90.rawValue
        case .normal, .rotated180, .flipped, .flipped180: rawValue
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
