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

        public init() {}

        /// Both counts together: several devices, or several plays of a recording.
        public static func + (a: Counts, b: Counts) -> Counts {
            var sum = a
            sum.stuck += b.stuck
            sum.palms += b.palms
            sum.jumps += b.jumps
            sum.held += b.held
            sum.repaired += b.repaired
            sum.lastLifts += b.lastLifts
            return sum
        }

        /// `self` counted `times` over.
        public func times(_ times: Int) -> Counts {
            var product = self
            product.stuck *= times
            product.palms *= times
            product.jumps *= times
            product.held *= times
            product.repaired *= times
            product.lastLifts *= times
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
            /// The contact jumped, and was cancelled and begun again.
            case jump
            /// The jump filter found the contact's finger reported in the slot of contact
            /// `inSlotOf`, and re-paired it: nothing was cancelled.
            case repaired(inSlotOf: Int32)

            /// The filter's name, as metrics, `frames --json` and the log's rate limits know it.
            public var filter: String {
                switch self {
                case .stuck: return "stuck"
                case .palm: return "palm"
                case .jump: return "jump"
                case .repaired: return "repaired"
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
