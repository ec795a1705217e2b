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

        /// Every count, for sums and products: a new count is added here once.
        static let fields: [WritableKeyPath<Counts, Int> & Sendable] = [
            \.stuck, \.palms, \.jumps, \.held, \.repaired, \.lastLifts,
            \.deadZone, \.phantomTaps, \.bursts, \.storms, \.stormContacts, \.ghosts, \.flips,
        ]

        /// Both counts together: several devices, or several plays of a recording.
        public static func + (a: Counts, b: Counts) -> Counts {
            var sum = a
            for field in fields { sum[keyPath: field] += b[keyPath: field] }
            return sum
        }

        /// `self` counted `times` over.
        public func times(_ times: Int) -> Counts {
            var product = self
            for field in Self.fields { product[keyPath: field] *= times }
            return product
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

            /// The filter's name, as metrics, `frames --json` and the log's rate limits know it.
            public var filter: String {
                switch self {
                case .stuck: return "stuck"
                case .palm, .markedPalm: return "palm"
                case .jump: return "jump"
                case .repaired: return "repaired"
                case .deadZone: return "dead_zone"
                case .phantomTap: return "phantom_tap"
                case .burst: return "burst"
                case .storm, .calm: return "storm"
                case .ghost: return "ghost"
                case .flip: return "flip"
                }
            }
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
