/// One finger as `screen.contacts` publishes it (docs/protocol.md, Streams).
public struct ScreenContact: Hashable, Sendable {
    /// The finger's number (``ReportedContact/finger``), which clients know it by.
    public var id: Int
    /// Where it is, in screen pixels.
    public var position: Point
    /// The touchscreen it is on, by the name its frames came with (the daemon's device node).
    public var device: String
    /// Where it will be, with `[screen] prediction`.
    public var predicted: Point?

    public init(id: Int, position: Point, device: String, predicted: Point? = nil) {
        self.id = id
        self.position = position
        self.device = device
        self.predicted = predicted
    }
}

/// `screen.contacts`: the fingers on every touchscreen, under the engine's numbers, in the
/// order they landed. The engine reports it as a stream like the elements' values
/// (``MotionEngine/reportContacts(on:)``), but only while someone follows it
/// (``MotionEngine/followContacts(_:)``): a value nobody reads would cost a comparison per
/// contact per frame.
public struct ScreenContacts: Sendable {
    /// The stream's name.
    public static let name = "screen.contacts"

    /// The fingers down, in the order they landed.
    public private(set) var contacts: [ScreenContact] = []

    public init() {}

    /// Takes in a frame's contacts (``FrameReport/contacts``), on the device named `device`;
    /// true when the published value changed. Compared in place, not rebuilt: the array is
    /// the value the report lends, and a frame that moves nothing publishes nothing.
    public mutating func update(with frame: some Collection<ReportedContact>, device: String) -> Bool {
        var changed = false
        for reported in frame {
            let contact = reported.contact
            let index = contacts.firstIndex { $0.id == reported.finger }
            if contact.phase.isActive {
                let current = ScreenContact(id: reported.finger, position: contact.position, device: device, predicted: reported.predicted)
                if let index {
                    if contacts[index] != current { contacts[index] = current; changed = true }
                } else {
                    contacts.append(current)
                    changed = true
                }
            } else if let index {
                contacts.remove(at: index)
                changed = true
            }
        }
        return changed
    }

    /// The predictions lapsed (no frame came): each finger is predicted where it is; true
    /// when that changed the published value.
    public mutating func lapsePredictions() -> Bool {
        var changed = false
        for index in contacts.indices where contacts[index].predicted != nil && contacts[index].predicted != contacts[index].position {
            contacts[index].predicted = contacts[index].position
            changed = true
        }
        return changed
    }

    /// Starts again empty (nobody follows any more): a later subscriber sees the fingers
    /// from the next frame on, each under its number.
    public mutating func reset() {
        contacts.removeAll()
    }
}
