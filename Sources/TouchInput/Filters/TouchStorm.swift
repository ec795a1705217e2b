import TouchModel

/// A touch storm: a sensor that floods contacts until it is reset. What tells a flood from a
/// crowd is not how many contacts land (a table of ten hands tapping six times a second makes
/// 60 a second) but what they are: a flood's contacts lift within a frame or three where
/// they landed (``floodTouch``), and come many at once; a finger's tap lasts 80 ms or more.
///
/// The rule, in three steps:
/// - *Held*: once the panel has sent ``heldAfter`` flood contacts within ``recent`` (or one,
///   with ``rushLandings`` landings within ``rush``), every contact that lands is held back
///   until it outlasts a flood's contact or moves: a finger begins 70 ms late, a flood's
///   contact lifts unseen. So a few of a storm's contacts are reported before it is seen.
/// - *Storm*: more flood contacts within a second than ``PhantomTouchSettings/stormContacts``
///   make the panel quiet: every contact down is cancelled, and contacts that land are held
///   back until the quiet ends.
/// - *Quiet's end*: the quiet ends once the panel has sent no flood contact for
///   ``PhantomTouchSettings/stormQuiet`` seconds, so it lasts as long as the flood and no
///   longer; contacts that landed in it and are still down are then judged as landing anew
///   (they begin once they outlast a flood's contact). Landings that last like fingers never
///   keep it quiet.
///
/// motiond does not reset the sensor: a USB panel could be re-enumerated by writing 0 then
/// 1 to its `authorized` file in sysfs, and a driver unbound and bound again, but both need
/// root, and a panel that storms again after a reset would be reset in a loop. The storm is
/// in health and the log for an operator to act on.
struct TouchStorm {
    /// The longest contact that is a flood's, from landing to lift, where it landed: three
    /// frames of a 50 Hz panel. A finger's tap lasts longer.
    static let floodTouch = 0.07
    /// Flood contacts within ``recent`` that make every landing held back.
    static let heldAfter = 3
    static let recent = 0.25
    /// How far a short contact must lift from the latest ``placesKept`` short contacts to be
    /// a flood's, in the stuck slop's unit (millimetres, or pixels where the panel's size is
    /// not believed): a flood lands at random places, while a person hammering a button
    /// taps one place again and again.
    static let apart = PanelDistance(millimetres: 10, pixels: 50)
    static let placesKept = 4
    /// Landings within ``rush`` that, with one flood contact within ``recent``, make every
    /// landing held back: a flood lands many at once, before its first contacts have lifted.
    static let rushLandings = 8
    static let rush = 0.05

    /// Landing times within the last second, oldest first.
    private var landings: [Double] = []
    /// When flood contacts lifted within the last second, oldest first.
    private var floods: [Double] = []
    /// When the storm began while the panel is quiet (or the quiet's end has passed and no
    /// flood contact came since); nil otherwise.
    private(set) var began: Double?
    /// When the latest flood contact lifted.
    private var lastFlood = -Double.infinity
    /// Where the latest short contacts lifted, oldest first.
    private var places: [Point] = []
    /// Whether a storm's quiet has yet to be told over.
    private var calmPending = false

    init() {}

    /// Whether the panel is quiet after a storm at `time`, with `calm` seconds of
    /// ``PhantomTouchSettings/stormQuiet``.
    func isQuiet(at time: Double, calm: Double) -> Bool {
        began != nil && time < lastFlood + calm
    }

    /// When the latest quiet ends (or ended) if no flood contact comes first; nil before
    /// any storm.
    func quietEnd(calm: Double) -> Double? {
        began == nil ? nil : lastFlood + calm
    }

    /// Whether a contact landing at `time` is held back: the panel floods, or is quiet.
    func holds(at time: Double, calm: Double) -> Bool {
        if isQuiet(at: time, calm: calm) { return true }
        let flooded = Self.count(floods, since: time - Self.recent)
        return flooded >= Self.heldAfter || (flooded >= 1 && Self.count(landings, since: time - Self.rush) >= Self.rushLandings)
    }

    /// A contact landed at `time`.
    mutating func landed(at time: Double) {
        Self.append(time, to: &landings)
    }

    /// A contact lifted at `time` within ``floodTouch`` of landing at `place`, where it
    /// landed: a flood's when it is `apart` (``apart``, in the panel's unit) from the latest short
    /// contacts. Returns true when it begins a storm (the panel was not quiet, and now is),
    /// with more than `limit` flood contacts within a second.
    mutating func shortContact(at time: Double, place: Point, apart: Double, limit: Int, calm: Double) -> Bool {
        let near = places.contains { $0.distance(to: place) <= apart }
        if places.count == Self.placesKept { places.removeFirst() }
        places.append(place)
        return near ? false : flooded(at: time, limit: limit, calm: calm)
    }

    /// A flood's contact lifted at `time`: see ``shortContact(at:place:apart:limit:calm:)``.
    private mutating func flooded(at time: Double, limit: Int, calm: Double) -> Bool {
        let wasQuiet = isQuiet(at: time, calm: calm)
        // A quiet that ended is over: a flood contact after it does not bring it back.
        if !wasQuiet { began = nil }
        Self.append(time, to: &floods)
        lastFlood = time
        guard limit > 0, !wasQuiet, floods.count > limit else { return false }
        began = time
        calmPending = true
        return true
    }

    /// When the quiet ends, if no flood contact comes first, while it has yet to be told
    /// over; nil otherwise.
    func pendingCalm(calm: Double) -> Double? {
        calmPending ? lastFlood + calm : nil
    }

    /// When the quiet ended, once, at `time` or later; nil before, and after it was told.
    mutating func calmed(at time: Double, calm: Double) -> Double? {
        guard calmPending, time >= lastFlood + calm else { return nil }
        calmPending = false
        return lastFlood + calm
    }

    /// The flood contacts of the last second before the latest one.
    var floodsInLastSecond: Int { floods.count }

    /// How many of `times` are at or after `since`.
    private static func count(_ times: [Double], since: Double) -> Int {
        times.count - (times.firstIndex { $0 >= since } ?? times.count)
    }

    /// Appends `time`, dropping the times more than a second before it (and all of them
    /// when the clock went back: a replay played again begins the count anew).
    private static func append(_ time: Double, to times: inout [Double]) {
        if let last = times.last, time < last { times.removeAll(keepingCapacity: true) }
        let old = times.firstIndex { time - $0 <= 1 } ?? times.count
        if old > 0 { times.removeFirst(old) }
        times.append(time)
    }
}
