import MotionCore

/// `screen.contacts`: the fingers on every touchscreen, in screen pixels, with numbers that
/// last from landing to lift (docs/protocol.md, Streams). Kept only while some client
/// subscribes: the daemon does not feed it otherwise, so it costs nothing then.
struct ContactsStream {
    static let name = "screen.contacts"

    /// One finger as published.
    struct Contact: Equatable {
        var id: Int
        var position: Point
        var device: String
    }

    private var identities = ContactIdentities()
    /// The fingers down, in the order they landed.
    private(set) var contacts: [Contact] = []

    /// Takes in a frame; true when the published value changed.
    mutating func update(with frame: TouchFrame, device: Int, node: String) -> Bool {
        var changed = false
        for contact in frame.contacts {
            let id = identities.identity(of: contact, device: device)
            let index = contacts.firstIndex { $0.id == id }
            if contact.phase.isActive {
                let current = Contact(id: id, position: contact.position, device: node)
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

    /// Starts again empty (nobody subscribes any more): a later subscriber sees the fingers
    /// from the next frame on, under new numbers.
    mutating func reset() {
        contacts = []
        identities.forgetAll()
    }

    /// The value as JSON: `[{"id", "x", "y", "device"}, …]`.
    var json: JSONValue {
        .array(contacts.map { contact in
            .object([("id", .integer(Int64(contact.id))), ("x", .number(contact.position.x)), ("y", .number(contact.position.y)),
                     ("device", .string(contact.device))])
        })
    }
}
