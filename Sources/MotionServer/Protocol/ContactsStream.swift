import MotionCore

/// `screen.contacts`: the fingers on every touchscreen, in screen pixels, under the engine's
/// numbers, which last from landing to lift (``ReportedContact/finger``; docs/protocol.md,
/// Streams). Kept only while some client subscribes: the daemon does not feed it otherwise,
/// so it costs nothing then.
struct ContactsStream {
    static let name = "screen.contacts"

    /// One finger as published.
    struct Contact: Equatable {
        var id: Int
        var position: Point
        var device: String
        /// Where it will be, with `[screen] prediction`.
        var predicted: Point?
    }

    /// The fingers down, in the order they landed.
    private(set) var contacts: [Contact] = []

    /// Takes in a frame's contacts (``FrameReport/contacts``), on the device whose node is
    /// `node`; true when the published value changed.
    mutating func update(with frame: [ReportedContact], node: String) -> Bool {
        var changed = false
        for reported in frame {
            let contact = reported.contact
            let id = reported.finger
            let index = contacts.firstIndex { $0.id == id }
            if contact.phase.isActive {
                let current = Contact(id: id, position: contact.position, device: node, predicted: reported.predicted)
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
    mutating func lapsePredictions() -> Bool {
        var changed = false
        for index in contacts.indices where contacts[index].predicted != nil && contacts[index].predicted != contacts[index].position {
            contacts[index].predicted = contacts[index].position
            changed = true
        }
        return changed
    }

    /// Starts again empty (nobody subscribes any more): a later subscriber sees the fingers
    /// from the next frame on, each under its number.
    mutating func reset() {
        contacts = []
    }

    /// The value as JSON: `[{"id", "x", "y", "device", "predicted"?}, …]`.
    var json: JSONValue {
        .array(contacts.map { contact in
            var members: [(String, JSONValue)] = [("id", .integer(Int64(contact.id))), ("x", .number(contact.position.x)),
                                                  ("y", .number(contact.position.y)), ("device", .string(contact.device))]
            if let predicted = contact.predicted { members.append(("predicted", .point(predicted))) }
            return .object(members)
        })
    }
}
