import TouchModel

/// What the phantom-touch filters do: the `[[device]]` keys `phantom_taps`, `wake_bursts`,
/// `storm_contacts`, `storm_quiet`, `infrared` and `dead_zones`.
///
/// Phantom touches are the touches no finger made: a panel that taps by itself at a steady
/// period, a burst of contacts at an edge when the panel wakes, a flood of contacts from a
/// sensor gone wrong, the "ghost" corners an infrared frame reports for two fingers, and a
/// bezel pressing the glass. Like the other filters, each default acts only on what no finger
/// does; each has a setting that turns it off.
public struct PhantomTouchSettings: Hashable, Sendable {
    /// Whether a tap that repeats at one place at a steady period, shorter than any finger's
    /// (``RepeatingTaps``), is suppressed once it has repeated.
    public var repeatingTaps: Bool
    /// Whether contacts that land together at an edge of the panel, or together after the
    /// panel was idle, are held back until they move like a finger or last.
    public var wakeBursts: Bool
    /// More flood contacts (each lifting within ``TouchStorm/floodTouch`` where it landed)
    /// than this within one second is a storm: the panel is quiet until it has sent none for
    /// ``stormQuiet`` seconds. 0 turns the filter off, holding back flood contacts too.
    public var stormContacts: Int
    /// How long a panel quiet after a storm must send no flood contact for the quiet to end,
    /// in seconds.
    public var stormQuiet: Double
    /// Whether the panel is an infrared or optical frame, whose two fingers may come with
    /// ghosts at the other corners of the rectangle they span; nil: when its name says so
    /// (``InfraredFrame/declares(name:)``).
    public var infrared: Bool?
    /// Rectangles in screen pixels where no touch begins: where the enclosure presses the
    /// glass. A contact that begins elsewhere may move through them.
    public var deadZones: [Rect]

    /// The defaults: every filter on, a storm at more than 20 flood contacts in a second
    /// (fingers' taps last longer, however many hands tap), quiet until 0.5 s without one.
    public init(repeatingTaps: Bool = true, wakeBursts: Bool = true, stormContacts: Int = 20, stormQuiet: Double = 0.5,
                infrared: Bool? = nil, deadZones: [Rect] = []) {
        self.repeatingTaps = repeatingTaps
        self.wakeBursts = wakeBursts
        self.stormContacts = stormContacts
        self.stormQuiet = stormQuiet
        self.infrared = infrared
        self.deadZones = deadZones
    }

    /// Every phantom filter off.
    public static let off = PhantomTouchSettings(repeatingTaps: false, wakeBursts: false, stormContacts: 0, infrared: false)

    /// Whether any of them is on for a device that is (`isInfrared`) an infrared frame.
    func isActive(isInfrared: Bool) -> Bool {
        repeatingTaps || wakeBursts || stormContacts > 0 || isInfrared || !deadZones.isEmpty
    }

    /// The most dead zones a device has: a bezel's edges and a few more.
    public static let maximumDeadZones = 32
    /// How long a contact held back as a burst must last, if it does not move, to be a finger.
    public static let burstProof = 0.25
    /// A panel that sent no contact for this long is idle: contacts that land together when
    /// it wakes are a burst until they prove themselves.
    public static let wakeIdle = 60.0
    /// How long an infrared frame's ghost may outlast a finger of its pair (the frame drops
    /// it in the next frame or so) before it is taken for a finger after all.
    public static let ghostAloneProof = 0.1
    /// How long a contact that lands alone at a corner of the rectangle two fingers span, or
    /// with the second finger, is held back when it does not move with its corner: a ghost
    /// follows its fingers, a finger resting or tapping there does not. 60 ms, or two and a
    /// half of a slow panel's frames, so that a moving corner is seen to move.
    static func ghostProof(frameInterval: Double?) -> Double { Swift.max(0.06, 2.5 * (frameInterval ?? 0)) }
    /// The longest an infrared frame reports its two fingers at their ghost corners before
    /// the positions are believed: a flip lasts a frame or two, and a put-back that went on
    /// would carry each finger on the other's coordinate. 50 ms, or two and a half frames.
    static func flipLongest(frameInterval: Double?) -> Double { Swift.max(0.05, 2.5 * (frameInterval ?? 0)) }
    /// How close to an axis's end a contact is at the panel's edge, for the burst rule: 1 mm
    /// where the panel's size is believed, else this fraction of the axis.
    public static let edgeMillimetres = 1.0
    public static let extremeFraction = 0.005
}

/// Panels that report what an infrared or optical frame sees: two crossing sets of beams,
/// which place two fingers at the corners of a rectangle and may report the other two
/// corners too, or in their place.
public enum InfraredFrame {
    /// Words in a device's name that say it is such a frame, each at the start of a word
    /// (so that "Fair Touch" is not "IR Touch").
    static let words = ["optical", "infrared", "irtouch", "ir touch", "ir-touch"]

    /// Whether the device's name says it is an infrared or optical frame.
    public static func declares(name: String) -> Bool {
        let lowered = name.lowercased()
        return words.contains { word in
            lowered.ranges(of: word).contains { found in
                found.lowerBound == lowered.startIndex
                    || lowered[lowered.index(before: found.lowerBound)].unicodeScalars.last?.properties.isAlphabetic != true
            }
        }
    }
}
