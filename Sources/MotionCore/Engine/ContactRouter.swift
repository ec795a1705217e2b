/// A contact on one device: tracking ids are per device, so two devices can both have a 7.
struct ContactKey: Hashable {
    var device: Int
    var trackingID: Int32
}

/// Where a contact down goes, from landing to lift: one record per contact, on every
/// device, and one function for every change (``transition(_:_:)``), as ``SlotState`` keeps a
/// slot's life in TouchInput.
enum ContactRoute {
    /// It landed on the element and is routed to it, under `id` (unique among the element's
    /// contacts; elements see landing order, not devices).
    case element(EngineElement, id: Int32)
    /// A screen gesture took it from its element, which has not yet heard so: at the contact's
    /// next frame (or when the element goes) the element hears it `cancelled`.
    case takenFromElement(EngineElement, id: Int32)
    /// It goes to no element until it lifts: it landed on none, or its element went, or the
    /// scene it landed in was replaced.
    case nowhere
    /// A screen gesture took it: no element hears it until it lifts.
    case screen

    /// What happens to a contact.
    enum Event {
        /// A frame says it began, on `element` (the hit test's, nil for none) under `id`.
        case land(on: EngineElement?, id: Int32)
        /// A frame has it down (moved or not).
        case move
        /// A frame has it ended or cancelled.
        case lift
        /// A screen gesture that takes the fingers (`takesFingers`) took it.
        case takenByScreen
        /// Its element was removed or turned off (`enabled` false), or the engine hands its
        /// fingers to a successor.
        case elementGone
    }

    /// What the contact's element hears of the event.
    enum Delivery {
        case none
        /// The contact as the frame has it, under the element's `id`.
        case contact(EngineElement, id: Int32)
        /// The contact, `cancelled`, under the element's `id`.
        case cancelled(EngineElement, id: Int32)
    }

    /// Whether the apps reading a virtual touchscreen may have a contact on `route`: not while
    /// an element that claims its touches holds it, nor once a screen gesture took it.
    static func forApps(_ route: ContactRoute?) -> Bool {
        switch route {
        case .element(let element, _)?: return !element.element.claimsTouches
        case .takenFromElement?, .screen?: return false
        case .nowhere?, nil: return true
        }
    }

    /// A contact's life, as a table (no record is a contact not down):
    ///
    /// | route | event | next | the element hears |
    /// |---|---|---|---|
    /// | none, nowhere | land | element, or nowhere if it hit none | the contact |
    /// | element | land | nowhere | `cancelled`: see below |
    /// | element | move | element | the contact |
    /// | element | lift | none | the contact (`ended`, `cancelled`) |
    /// | element | takenByScreen | takenFromElement | nothing yet |
    /// | takenFromElement | move, land | screen | `cancelled` |
    /// | takenFromElement | lift | none | `cancelled` |
    /// | element, takenFromElement | elementGone | nowhere | `cancelled` |
    /// | none | move | nowhere (down, but on nothing: it was down before this engine) | nothing |
    /// | none, nowhere | takenByScreen | screen | nothing |
    /// | nowhere, screen | lift | none | nothing |
    ///
    /// A contact that lands again on an element without having lifted (a device that reuses
    /// a tracking id) is one that was lost: its element hears it `cancelled`, and it goes to
    /// no element until it lifts. Any other pair leaves the route as it is and delivers
    /// nothing.
    static func transition(_ route: ContactRoute?, _ event: Event) -> (next: ContactRoute?, delivery: Delivery) {
        switch (route, event) {
        case let (.none, .land(element, id)), let (.nowhere?, .land(element, id)):
            return (element.map { .element($0, id: id) } ?? .nowhere, element.map { .contact($0, id: id) } ?? .none)
        case let (.element(element, id)?, .land):
            return (.nowhere, .cancelled(element, id: id))
        case let (.element(element, id)?, .move):
            return (route, .contact(element, id: id))
        case let (.element(element, id)?, .lift):
            return (nil, .contact(element, id: id))
        case let (.element(element, id)?, .takenByScreen):
            return (.takenFromElement(element, id: id), .none)
        case let (.takenFromElement(element, id)?, .move), let (.takenFromElement(element, id)?, .land):
            return (.screen, .cancelled(element, id: id))
        case let (.takenFromElement(element, id)?, .lift):
            return (nil, .cancelled(element, id: id))
        case let (.element(element, id)?, .elementGone), let (.takenFromElement(element, id)?, .elementGone):
            return (.nowhere, .cancelled(element, id: id))
        case (.none, .move):
            return (.nowhere, .none)
        case (.none, .takenByScreen), (.nowhere?, .takenByScreen):
            return (.screen, .none)
        case (.nowhere?, .lift), (.screen?, .lift):
            return (nil, .none)
        default:
            return (route, .none)
        }
    }
}

/// Every contact down, on an element or not, on every device, where each goes
/// (``ContactRoute``) and which finger it is: what the engine asks to hand a frame's contacts
/// to the elements, to know whether anyone touches the screen, which fingers hold an
/// element, and to number the fingers for everyone who publishes them.
///
/// A finger's number lasts from its landing to its lift, across every device, and is never
/// given twice while the process runs (the kernel's tracking ids are per device, and reused):
/// `screen.contacts` publishes it, TUIO's cursors follow it, and an element hears its
/// contacts under it. Numbers count from 1 in the order contacts are first seen.
struct ContactRouter {
    /// One contact down: its route, and its finger's number (0 until the contact is first
    /// routed, for a contact a screen gesture took in the frame it landed in).
    struct Entry {
        var route: ContactRoute
        var finger: Int
    }

    private var routes: [ContactKey: Entry] = [:]
    private var nextFinger = 1
    /// The contacts a lock took (``lockOut(into:)``) or that landed during one: no element,
    /// screen gesture, stream or output hears of them until they lift, even after the lock
    /// ends, so that a cloth still down then does nothing. Kept apart from the routes, which
    /// they never rejoin.
    private var lockedOut: Set<ContactKey> = []

    /// Whether any contact is down anywhere, locked out or not.
    var isAnyDown: Bool { !routes.isEmpty || !lockedOut.isEmpty }
    /// Whether a contact a lock took is still down.
    var hasLockedOut: Bool { !lockedOut.isEmpty }

    /// Routes one contact of a device's frame; `hit` finds the element a landing contact is
    /// on. Returns its finger's number, what its element hears, if any (the contact under
    /// that number), and whether the apps may have it (``ContactRoute/forApps``).
    mutating func route(_ contact: TouchContact, device: Int, hit: (Point) -> EngineElement?) -> (finger: Int, heard: (EngineElement, TouchContact)?, forApps: Bool) {
        let key = ContactKey(device: device, trackingID: contact.trackingID)
        let entry = routes[key]
        // A contact never seen has a number from here, even one that only lifts (which
        // nobody publishes): numbers follow the order contacts are seen in.
        let finger = entry.map { $0.finger != 0 ? $0.finger : takeFinger() } ?? takeFinger()
        let event: ContactRoute.Event
        switch contact.phase {
        case .began:
            switch entry?.route {
            case nil, .nowhere?:
                event = .land(on: hit(contact.position), id: Int32(truncatingIfNeeded: finger))
            case .element?, .takenFromElement?, .screen?:
                // Only the table's verdict matters: the element is not looked up.
                event = .land(on: nil, id: 0)
            }
        case .moved, .stationary: event = .move
        case .ended, .cancelled: event = .lift
        }
        let (next, delivery) = ContactRoute.transition(entry?.route, event)
        // A finger moving on its element leaves its record as it was: not stored again,
        // which hashed the key a second time every frame.
        if case .move = event, case .element? = entry?.route, entry?.finger == finger {
            return (finger, Self.heard(delivery, contact), ContactRoute.forApps(next))
        }
        routes[key] = next.map { Entry(route: $0, finger: finger) }
        // A lift has no route left: it is judged by the one it had.
        return (finger, Self.heard(delivery, contact), ContactRoute.forApps(next ?? entry?.route))
    }

    /// The finger number of a contact down; nil for one not down, or not numbered yet.
    func finger(of key: ContactKey) -> Int? {
        routes[key].flatMap { $0.finger != 0 ? $0.finger : nil }
    }

    /// A screen gesture took every contact in `keys` from the elements.
    mutating func takenByScreen(_ keys: some Sequence<ContactKey>) {
        for key in keys {
            let next = ContactRoute.transition(routes[key]?.route, .takenByScreen).next
            routes[key] = next.map { Entry(route: $0, finger: routes[key]?.finger ?? 0) }
        }
    }

    /// A lock began: every contact down is locked out until it lifts. Their fingers' numbers
    /// go into `fingers`, in order, for whoever showed them to drop them. Their elements must
    /// have heard them cancelled first (``MotionEngine/cancelTouches(of:at:)``).
    mutating func lockOut(into fingers: inout [Int]) {
        let start = fingers.count
        for (key, entry) in routes {
            lockedOut.insert(key)
            if entry.finger != 0 { fingers.append(entry.finger) }
        }
        fingers[start...].sort()
        routes.removeAll()
    }

    /// Follows a contact that no one is to hear of: every contact while `locked`, and after
    /// the lock those it took, until they lift. True when `contact` is one of them.
    mutating func isLockedOut(_ contact: TouchContact, device: Int, locked: Bool) -> Bool {
        let key = ContactKey(device: device, trackingID: contact.trackingID)
        guard locked || lockedOut.contains(key) else { return false }
        if contact.phase.isActive { lockedOut.insert(key) } else { lockedOut.remove(key) }
        return true
    }

    /// `element` went, or was turned off: its contacts go nowhere until they lift. Their ids,
    /// for the element to hear them `cancelled`.
    mutating func elementGone(_ element: EngineElement, into cancelled: inout [Int32]) {
        for (key, entry) in routes {
            switch entry.route {
            case .element(let owner, _), .takenFromElement(let owner, _):
                guard owner === element else { continue }
                let (next, delivery) = ContactRoute.transition(entry.route, .elementGone)
                routes[key] = next.map { Entry(route: $0, finger: entry.finger) }
                if case .cancelled(_, let id) = delivery { cancelled.append(id) }
            case .nowhere, .screen:
                continue
            }
        }
    }

    /// Hands each element the contacts holding it (``EngineElement/fingers``), each by key
    /// and the element's id for it: one pass over the contacts, whatever the elements.
    func collectFingers() {
        for (key, entry) in routes {
            if case .element(let owner, let id) = entry.route { owner.fingers.append((key, id)) }
        }
    }

    /// The contacts down, routed nowhere, under their numbers: what a successor engine knows
    /// of the fingers down when it takes over (they land on none of its elements, the screen
    /// is not idle under them, and they keep their numbers). Those locked out stay so.
    var handedOver: ContactRouter {
        var successor = ContactRouter()
        for (key, entry) in routes { successor.routes[key] = Entry(route: .nowhere, finger: entry.finger) }
        successor.lockedOut = lockedOut
        successor.nextFinger = nextFinger
        return successor
    }

    /// What the element hears of a delivery: the contact under the element's id for it.
    private static func heard(_ delivery: ContactRoute.Delivery, _ contact: TouchContact) -> (EngineElement, TouchContact)? {
        var heard = contact
        switch delivery {
        case .none:
            return nil
        case .contact(let element, let id):
            heard.trackingID = id
            return (element, heard)
        case .cancelled(let element, let id):
            heard.trackingID = id
            heard.phase = .cancelled
            return (element, heard)
        }
    }

    private mutating func takeFinger() -> Int {
        defer { nextFinger += 1 }
        return nextFinger
    }
}
