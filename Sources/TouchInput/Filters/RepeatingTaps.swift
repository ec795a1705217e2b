import TouchModel

/// A panel that taps by itself: a touch of a frame or two (25 ms at most), at one spot, again and
/// again at a steady period (one report: every 12.864 s, so a kiosk page got a click there
/// every 13 s and the screen never blanked).
///
/// The rule: three short touches (at most ``longestTouch``) at one spot (within ``spot``:
/// a phantom is where the sensor's fault is, while a person tapping one place scatters their
/// taps over millimetres), the second interval equal
/// to the first (within ``tolerance(period:)``) and at least ``shortestPeriod``, make a
/// phantom. From then on, a contact that lands at its place when its next tap is due is held
/// back until it outlasts a short touch or moves: a real finger tapping there becomes a tap a
/// few tens of milliseconds late; the phantom's tap lifts unseen. A phantom that misses
/// ``forgottenAfter`` taps in a row is forgotten.
///
/// Places are in the unit of the stuck slop: millimetres where the panel's size is believed,
/// screen pixels elsewhere. Times are the frames' clock; no threshold is in frames, so a
/// slow panel's real taps are judged as a fast one's.
struct RepeatingTaps {
    /// A learned phantom: where, how often, and when it last tapped.
    public struct Phantom: Hashable, Sendable {
        /// Where, in the unit of ``RepeatingTaps/spot``.
        var place: Point
        /// Where, in screen pixels: what `devices` shows.
        public var pixels: Point
        /// Seconds between its taps.
        public var period: Double
        /// When it last tapped (the frames' clock).
        public var last: Double
        /// Its taps held back and lifted unseen so far.
        public var suppressed = 0
    }

    /// A short touch seen lately, a phantom's tap perhaps.
    private struct ShortTouch {
        var place: Point
        var pixels: Point
        var time: Double
    }

    /// How far a contact held back at a phantom's place must move to prove itself a finger:
    /// 2 mm, or 10 px where the panel's size is not believed (the infrared rules measure
    /// ghost corners with it too).
    static let radius = PanelDistance(millimetres: 2, pixels: 10)
    /// How far apart a phantom's taps may be and still be at one spot: 0.5 mm, or 3 px where
    /// the panel's size is not believed.
    static let spot = PanelDistance(millimetres: 0.5, pixels: 3)
    /// The shortest period a phantom has: a person tapping one spot in a quick steady rhythm
    /// is not one.
    static let shortestPeriod = 1.0
    /// How many of its taps in a row a phantom may miss before it is forgotten.
    static let forgottenAfter = 3
    /// Short touches kept, and phantoms: a panel has one or two places that tap.
    static let keptTouches = 16
    static let keptPhantoms = 4

    /// How far a tap may be from its due time: a few frames, or 2 % of a long period.
    static func tolerance(period: Double) -> Double { Swift.max(0.05, 0.02 * period) }

    /// The longest touch that is a phantom's, from landing to lift: one frame of a 40 Hz
    /// panel. A person's quickest taps last longer (a 50 Hz panel's 40 ms tap is two frames).
    static let longestTouch = 0.025

    private(set) var phantoms: [Phantom] = []
    private var touches: [ShortTouch] = []
    /// The unit places are in.
    var radius: Double
    /// How near a tap must be to be at a phantom's spot, in the same unit.
    var spot: Double

    init(unit: DistanceUnit) {
        radius = Self.radius[unit]
        spot = Self.spot[unit]
        touches.reserveCapacity(Self.keptTouches)
    }

    /// A short touch at `place` lifted at `time`: learns a phantom from it with the short
    /// touches seen before; returns the phantom when this touch made it one.
    mutating func shortTouch(at place: Point, pixels: Point, time: Double) -> Phantom? {
        forget(before: time)
        defer {
            if touches.count == Self.keptTouches { touches.removeFirst() }
            touches.append(ShortTouch(place: place, pixels: pixels, time: time))
        }
        // The latest two earlier taps at this place.
        let here = touches.filter { $0.place.distance(to: place) <= spot }
        guard here.count >= 2 else { return nil }
        let (first, second) = (here[here.count - 2], here[here.count - 1])
        let period = time - second.time
        guard period >= Self.shortestPeriod,
              abs((second.time - first.time) - period) <= Self.tolerance(period: period),
              !phantoms.contains(where: { $0.place.distance(to: place) <= spot }) else { return nil }
        let phantom = Phantom(place: place, pixels: pixels, period: period, last: time)
        if phantoms.count == Self.keptPhantoms { phantoms.removeFirst() }
        phantoms.append(phantom)
        return phantom
    }

    /// Whether a phantom is due to tap at `place` at `time`.
    func isDue(at place: Point, time: Double) -> Bool {
        phantoms.contains { phantom in
            guard phantom.place.distance(to: place) <= spot else { return false }
            let periods = ((time - phantom.last) / phantom.period).rounded()
            return periods >= 1 && periods <= Double(Self.forgottenAfter) && abs(time - (phantom.last + periods * phantom.period)) <= Self.tolerance(period: phantom.period)
        }
    }

    /// The phantom at `place` tapped at `time`, and its tap was lifted unseen; returns it.
    mutating func tapped(at place: Point, time: Double) -> Phantom? {
        guard let index = phantoms.firstIndex(where: { $0.place.distance(to: place) <= spot }) else { return nil }
        phantoms[index].last = time
        phantoms[index].suppressed += 1
        return phantoms[index]
    }

    /// Forgets the phantoms that missed too many taps by `time`.
    private mutating func forget(before time: Double) {
        phantoms.removeAll { time - $0.last > (Double(Self.forgottenAfter) + 0.5) * $0.period }
    }
}
