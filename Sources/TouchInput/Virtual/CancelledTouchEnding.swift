import TouchModel

/// How a virtual touchscreen ends a touch that motiond cancels after the apps saw it begin: a
/// palm found late, a stuck finger, a jump, a claim or a screen gesture taking it, a lock, a
/// panel unplugged.
///
/// The kernel's way is a cancel: the slot's tool turns `MT_TOOL_PALM` and it is released,
/// which libinput reports as a touch cancel. But a compositor must pass that on, and Debian
/// 12's do not (weston 10 logs "unknown libinput event 503", sway 1.7 and cage drop it): the
/// cancelled touch stays down in the app, and in Chromium the next real touch is refused and
/// its lift ends the stale one as a tap where the palm was. So by default motiond ends such a
/// touch as a lift that no toolkit takes for a tap, a long press or a fling (``Withdrawal``).
public enum CancelledTouchEnding: String, Sendable, Hashable, CaseIterable {
    /// Lift the touch where no app takes it for anything: safe on every compositor.
    case withdraw
    /// Cancel it (`MT_TOOL_PALM`, then released): for compositors that pass a touch cancel on
    /// (sway 1.9 and later), where the app sees `touchcancel`.
    case cancel
}

/// A touch being lifted so that no app takes it for a tap, a long press or a fling, as tried
/// in Chromium under weston 10 (a real tap half a second later clicked every time):
/// - a touch still within a tap's slop of its landing is slid out of it over a few frames, so
///   it is no tap and no long press; a touch that was dragging stays where it is, since
///   moving it would end the drag somewhere else;
/// - then it is held still before it lifts, so that the velocity at the lift is nil and
///   nothing flings (a lift right after a slide was a fling, and stopping that fling ate the
///   next tap's click). Held still means shown still: a velocity tracker sees only the samples
///   it is given, and Chromium's reckons a lift's velocity from the last 100 ms of them,
///   however long ago they came; a touch merely left alone for 0.15 s after a drag still
///   flung in the compositor lab. So the still touch is shown every 10 ms, a quarter pixel
///   (one unit) back and forth, which libinput and the compositors pass on.
struct Withdrawal: Sendable {
    /// How far a touch still within a tap's slop slides, in pixels: past every toolkit's slop
    /// (Chromium's 15 px, Flutter's 18 logical pixels, Qt's and GTK's under 20), twice over at
    /// a scale of 2.
    static let slide = 48.0
    /// A touch that moved this far from its landing is a drag, not a tap: it is not slid.
    static let tapSlop = 15.0
    static let steps = 5
    /// Between two steps of the slide: a 100 Hz panel's frames.
    static let stepInterval = 0.010
    /// How long it is held still before the lift, shown every ``stepInterval``: longer than a
    /// velocity tracker's window (Chromium's and Android's look back 100 ms).
    static let still = 0.15

    /// The positions still to show, in the device's units, the next one first.
    private(set) var path: [(x: Int32, y: Int32)]
    /// When the next position is shown, or when the touch lifts once the path is done.
    private(set) var deadline: Double

    /// The withdrawal of a touch at `units` that landed at `landing`, beginning at `time` on
    /// a device of `geometry`, where `others` are the
    /// fingers still shown. The slide goes toward the middle of the area, so that it stays on
    /// the output (and off the edges, where compositors have their own swipes); with another
    /// finger down, across the line to the nearest one, so that the two fingers' span hardly
    /// changes and no app pinches.
    init(from units: (x: Int32, y: Int32), landing: (x: Int32, y: Int32), at time: Double,
         geometry: VirtualTouchscreenGeometry, others: [(x: Int32, y: Int32)] = []) {
        let perPixel = VirtualTouchscreenGeometry.unitsPerPixel
        let here = Point(x: Double(units.x) / perPixel, y: Double(units.y) / perPixel)
        let landed = Point(x: Double(landing.x) / perPixel, y: Double(landing.y) / perPixel)
        guard here.distance(to: landed) <= Self.tapSlop else {
            path = Self.heldStill(at: units, maximum: geometry.maximum)
            deadline = time
            return
        }
        let middle = Point(x: geometry.deviceSize.width / 2, y: geometry.deviceSize.height / 2)
        let toMiddle = middle - here
        var direction = toMiddle.length < 1 ? Point(x: 1, y: 0) : Point(x: toMiddle.x / toMiddle.length, y: toMiddle.y / toMiddle.length)
        let nearest = others.map { Point(x: Double($0.x) / perPixel, y: Double($0.y) / perPixel) }.min { here.distance(to: $0) < here.distance(to: $1) }
        if let nearest, here.distance(to: nearest) >= 1 {
            let away = here - nearest
            let across = Point(x: -away.y / away.length, y: away.x / away.length)
            direction = across.x * direction.x + across.y * direction.y >= 0 ? across : Point(x: -across.x, y: -across.y)
        }
        let maximum = geometry.maximum
        let slid = (1...Self.steps).map { step in
            let along = Self.slide * Double(step) / Double(Self.steps) * perPixel
            let x = (Double(units.x) + direction.x * along).rounded()
            let y = (Double(units.y) + direction.y * along).rounded()
            return (Int32(Swift.min(Swift.max(x, 0), Double(maximum.x))), Int32(Swift.min(Swift.max(y, 0), Double(maximum.y))))
        }
        path = slid + Self.heldStill(at: slid[slid.count - 1], maximum: maximum)
        deadline = time
    }

    /// The positions that show a touch still at `units` for ``still``: one unit (a quarter
    /// pixel) aside and back, every ``stepInterval``.
    private static func heldStill(at units: (x: Int32, y: Int32), maximum: (x: Int32, y: Int32)) -> [(x: Int32, y: Int32)] {
        let aside = units.x < maximum.x ? units.x + 1 : units.x - 1
        return (0..<Int((still / stepInterval).rounded())).map { step in (step % 2 == 0 ? aside : units.x, units.y) }
    }

    /// The next step due by `time`: a position to show, or nil when the touch is to lift now
    /// (or not yet: ``liftsBy(_:)`` says which).
    mutating func step(at time: Double) -> (x: Int32, y: Int32)? {
        guard time >= deadline, !path.isEmpty else { return nil }
        let next = path.removeFirst()
        deadline = time + Self.stepInterval
        return next
    }

    /// Whether the touch is to lift by `time`: slid, and held still long enough.
    func liftsBy(_ time: Double) -> Bool { path.isEmpty && time >= deadline }
}
