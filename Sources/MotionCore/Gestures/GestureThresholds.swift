/// The distances, angles and times that decide when gestures begin, with their defaults.
///
/// Each distance is given in millimetres, for devices whose size is believed, and in pixels,
/// for those whose is not (many touchscreens): a distance must never come out of a division
/// by an unknown resolution (``PanelDistance``).
///
/// How the defaults compare (1 dp = 1/160 in = 0.16 mm, 1 pt ≈ 0.16 mm on a 163 ppi iPhone):
///
/// | threshold                | motiond        | Android                        | iOS             | Hammer.js  | libinput             |
/// |--------------------------|----------------|--------------------------------|-----------------|------------|----------------------|
/// | drag slop / tap movement | 3 mm, 16 px    | touch slop 8 dp = 1.3 mm       | ~10 pt = 1.6 mm | 10 px      | tap motion 1.3 mm    |
/// | tap: longest press       | 0.3 s          | long press after 0.5 s         | none            | 250 ms     | tap timeout 180 ms   |
/// | multiple taps: interval  | 0.3 s          | double tap 300 ms              | ~0.35 s         | 300 ms     | —                    |
/// | multiple taps: distance  | 12 mm, 50 px   | double tap slop 100 dp = 16 mm | —               | 10 px      | —                    |
/// | pinch: span change       | 4 mm, 20 px    | span slop 16 dp (diameter)     | —               | any        | —                    |
/// | pinch: smallest span     | 5 mm, 20 px    | min span 27 mm (diameter)      | —               | —          | —                    |
/// | rotation: angle          | 10°            | (no rotation detector)         | —               | any        | —                    |
/// | velocity: window         | 100 ms         | horizon 100 ms                 | —               | last 25 ms | —                    |
/// | velocity: finger stopped | 50 ms still    | assumed stopped after 40 ms    | —               | —          | —                    |
///
/// motiond's slops are larger than phones': kiosk panels are bigger, often noisier, and
/// touched by people in gloves or in a hurry; and a finger pressed and held still on a
/// real panel (the Atmel recording of a two-finger hold) drifts about 12 px, 2.2 mm, as its
/// contact patch settles, which must not start a drag. A pinch's span is the mean
/// distance of the fingers from their centroid (half of Android's two-finger diameter). The
/// rotation threshold sits well above the 5.5° a two-finger pan drifts in the recordings.
public struct GestureThresholds: Hashable, Sendable {
    /// How far the fingers' centroid moves before a drag begins.
    public var dragSlop = PanelDistance(millimetres: 3, pixels: 16)
    /// How far any finger may move and still tap; the same as the drag slop, so that a
    /// tap fails exactly when a drag can begin.
    public var tapSlop = PanelDistance(millimetres: 3, pixels: 16)
    /// The longest press that still taps, in seconds.
    public var tapMaximumDuration = 0.3
    /// The longest pause between the taps of a double (or triple…) tap, in seconds.
    public var multipleTapInterval = 0.3
    /// How far apart the taps of a multiple tap may land.
    public var multipleTapDistance = PanelDistance(millimetres: 12, pixels: 50)
    /// How much the span changes before a pinch begins.
    public var pinchSlop = PanelDistance(millimetres: 4, pixels: 20)
    /// The span below which scale and rotation are not computed (fingers too close to
    /// measure: their angle and ratio are mostly noise).
    public var minimumSpan = PanelDistance(millimetres: 5, pixels: 20)
    /// How far the fingers turn before a rotation begins, in radians.
    public var rotationSlop = 10.0 * Double.pi / 180
    /// How long the fingers are held, in seconds, before a long press begins (Android's and
    /// iOS's default, 0.5 s).
    public var longPressDuration = 0.5
    /// How far any finger may move before the long press begins: twice the tap's, since a
    /// finger held for half a second settles further than one that taps (the Atmel
    /// recording of a two-finger hold drifts 20 px on a 1920-pixel screen in its first 0.2 s).
    public var longPressSlop = PanelDistance(millimetres: 6, pixels: 32)
    /// How far the fingers travel, on average, for a swipe.
    public var swipeDistance = PanelDistance(millimetres: 25, pixels: 100)
    /// How fast, on average from landing to lift, per second: a slower movement is a drag
    /// (the Atmel recording of a four-finger drag goes 667 px/s; a real swipe, 3,000 and up).
    public var swipeMinimumSpeed = PanelDistance(millimetres: 200, pixels: 1000)
    /// How far from its axis a swipe's direction (and each finger's) may turn, in radians.
    public var swipeAngle = 30.0 * Double.pi / 180
    /// How near a screen edge a finger lands for an edge swipe.
    public var edgeBand = PanelDistance(millimetres: 5, pixels: 20)
    /// How far it then moves inward (at the swipe's speed, ``swipeMinimumSpeed``).
    public var edgeSwipeDistance = PanelDistance(millimetres: 20, pixels: 80)
    /// The stretch of recent samples velocities are estimated from, in seconds.
    public var velocityWindow = 0.1
    /// A finger that has not moved for this long, in seconds, has stopped.
    public var stoppedAfter = 0.05

    /// The defaults above.
    public init() {}
}
