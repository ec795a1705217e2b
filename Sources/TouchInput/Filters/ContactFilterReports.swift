import TouchModel

/// What the filters tell of their work: counts for `stats` and `devices`, and notices for the
/// log.
extension ContactFilters {
    /// How often each filter acted: what `stats` and `devices` count.
    public struct Counts: Hashable, Sendable {
        /// Contacts cancelled because they stayed put for `stuck_after`.
        public var stuck = 0
        /// Contacts cancelled, or never begun, because they were larger than a palm.
        public var palms = 0
        /// Contacts cancelled and begun again because they jumped.
        public var jumps = 0
        /// Positions held back by hysteresis.
        public var held = 0
        /// Contacts re-paired with their fingers after the panel exchanged their positions.
        public var repaired = 0
        /// Protocol A frames with no contact whose lift was supplied (``ProtocolAConverter``).
        public var lastLifts = 0
        /// Contacts that landed in a dead zone, never begun.
        public var deadZone = 0
        /// A repeating phantom's taps, lifted unseen.
        public var phantomTaps = 0
        /// Contacts of a burst (together at an edge, or together as an idle panel woke) that
        /// lifted before they proved themselves, never begun.
        public var bursts = 0
        /// Touch storms: times the panel was made quiet.
        public var storms = 0
        /// Contacts cancelled or never begun because the panel was quiet after a storm.
        public var stormContacts = 0
        /// An infrared frame's ghost corners, never begun.
        public var ghosts = 0
        /// Frames in which an infrared frame's two fingers were reported at their ghost
        /// corners, put back where they were.
        public var flips = 0

        public init() {}

        /// The count of `kind`. A switch, not a key path: sums of counts run every frame of a
        /// replay, and a key path is made and looked up anew at each use (16,000
        /// instructions a frame, counted by callgrind).
        public subscript(kind: FilterCount) -> Int {
            get {
                switch kind {
                case .stuck: stuck
                case .palms: palms
                case .jumps: jumps
                case .repaired: repaired
                case .held: held
                case .lastLifts: lastLifts
                case .deadZone: deadZone
                case .phantomTaps: phantomTaps
                case .bursts: bursts
                case .storms: storms
                case .stormContacts: stormContacts
                case .ghosts: ghosts
                case .flips: flips
                }
            }
            set {
                switch kind {
                case .stuck: stuck = newValue
                case .palms: palms = newValue
                case .jumps: jumps = newValue
                case .repaired: repaired = newValue
                case .held: held = newValue
                case .lastLifts: lastLifts = newValue
                case .deadZone: deadZone = newValue
                case .phantomTaps: phantomTaps = newValue
                case .bursts: bursts = newValue
                case .storms: storms = newValue
                case .stormContacts: stormContacts = newValue
                case .ghosts: ghosts = newValue
                case .flips: flips = newValue
                }
            }
        }

        /// Both counts together: several devices, or several plays of a recording.
        public static func + (a: Counts, b: Counts) -> Counts {
            var sum = a
            for kind in FilterCount.allCases { sum[kind] += b[kind] }
            return sum
        }

        /// `self` counted `times` over.
        public func times(_ times: Int) -> Counts {
            var product = self
            for kind in FilterCount.allCases { product[kind] *= times }
            return product
        }
    }

    /// Each thing the filters count (``Counts``), by the one name it has outside motiond: its
    /// key in the `filtered` object of `stats` and `devices`, which motionctl reads back and
    /// the metrics' labels follow (MotionServer's `FilterCount.metric`). In the order
    /// `filtered` lists them; a new count is added here and to ``Counts``' subscript, and
    /// every sum, product, JSON object and metric takes it up.
    public enum FilterCount: String, CaseIterable, Sendable {
        case stuck, palms, jumps, repaired, held
        case lastLifts = "last_lifts"
        case deadZone = "dead_zone"
        case phantomTaps = "phantom_taps"
        case bursts, storms
        case stormContacts = "storm_contacts"
        case ghosts, flips

        /// Its key in `filtered`.
        public var key: String { rawValue }

        /// The filter's name, singular, as the metrics' `filter` label, `frames --json`, the
        /// log's rate limits and the notices (``Notice/Kind/filter``) know it.
        public var filter: String {
            switch self {
            case .stuck: "stuck"
            case .palms: "palm"
            case .jumps: "jump"
            case .repaired: "repaired"
            case .held: "held"
            case .lastLifts: "last_lift"
            case .deadZone: "dead_zone"
            case .phantomTaps: "phantom_tap"
            case .bursts: "burst"
            case .storms, .stormContacts: "storm"
            case .ghosts: "ghost"
            case .flips: "flip"
            }
        }
    }

    /// What the filters did since they last said: the notices for the log, and for the
    /// metrics the counts, only when they changed.
    public struct Report: Sendable {
        public var notices: [Notice]
        /// The totals since the device was opened; nil when unchanged since the last report.
        public var counts: Counts?
    }

    /// Something a filter did that an operator should hear of, once per contact.
    public struct Notice: Hashable, Sendable {
        /// Which filter acted, and what only that filter says.
        public enum Kind: Hashable, Sendable {
            /// The contact stayed put for `stuck_after` and was cancelled.
            case stuck
            /// The contact is larger than a palm. `fromLanding`: it was ignored from its
            /// landing, so it never began and nothing was cancelled, and a reader of the log
            /// must not look for it in the frames.
            case palm(fromLanding: Bool)
            /// The panel itself marked the contact `MT_TOOL_PALM`: cancelled, or (`fromLanding`)
            /// never begun. Counted with the palms found by size.
            case markedPalm(fromLanding: Bool)
            /// The contact jumped, and was cancelled and begun again.
            case jump
            /// The jump filter found the contact's finger reported in the slot of contact
            /// `inSlotOf`, and re-paired it: nothing was cancelled.
            case repaired(inSlotOf: Int32)
            /// The contact landed in a dead zone: it never began.
            case deadZone
            /// A repeating phantom's tap at this place, `period` seconds after its last, or
            /// (`learned`) the third short tap that showed it a phantom: nothing was begun
            /// after it was learned.
            case phantomTap(period: Double, learned: Bool)
            /// The contact landed in a burst and lifted before it proved itself: it never began.
            case burst
            /// A storm: `contacts` flood contacts within a second (``TouchStorm``); every
            /// contact down cancelled, the panel is quiet until it sends none for `quiet` seconds.
            case storm(contacts: Int, quiet: Double)
            /// The panel sent no flood contact for `after` seconds: its storm's quiet is over.
            case calm(after: Double)
            /// The contact was an infrared frame's ghost corner: it never began.
            case ghost
            /// The infrared frame reported its two fingers at their ghost corners; they were
            /// put back on their own.
            case flip

            /// The count the filter keeps: whose name it goes by.
            public var count: FilterCount {
                switch self {
                case .stuck: .stuck
                case .palm, .markedPalm: .palms
                case .jump: .jumps
                case .repaired: .repaired
                case .deadZone: .deadZone
                case .phantomTap: .phantomTaps
                case .burst: .bursts
                case .storm, .calm: .storms
                case .ghost: .ghosts
                case .flip: .flips
                }
            }

            /// The filter's name, as metrics, `frames --json` and the log's rate limits know it.
            public var filter: String { count.filter }
        }

        public var kind: Kind
        public var trackingID: Int32
        /// Where, in screen pixels.
        public var position: Point
        public var time: Double

        public init(kind: Kind, trackingID: Int32, position: Point, time: Double) {
            self.kind = kind
            self.trackingID = trackingID
            self.position = position
            self.time = time
        }
    }
}
