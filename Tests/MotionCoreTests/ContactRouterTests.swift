import Testing
@testable import MotionCore

/// A contact's route from landing to lift (``ContactRoute``): the table, row by row, and the
/// router that keeps one route per contact.
@Suite("Contact routes")
struct ContactRouterTests {
    static func makeCard() -> EngineElement {
        EngineElement(element: Element(id: "card", center: Point(x: 100, y: 100), size: Size(width: 100, height: 100)),
                                    runtime: MotionRuntime(clock: ManualFrameClock()))
    }

    /// A route as text, for comparing.
    static func name(_ route: ContactRoute?) -> String {
        switch route {
        case nil: return "none"
        case .element(let element, let id)?: return "element \(element.element.id) \(id)"
        case .takenFromElement(let element, let id)?: return "taken from \(element.element.id) \(id)"
        case .nowhere?: return "nowhere"
        case .screen?: return "screen"
        }
    }

    static func name(_ delivery: ContactRoute.Delivery) -> String {
        switch delivery {
        case .none: return "nothing"
        case .contact(let element, let id): return "contact to \(element.element.id) \(id)"
        case .cancelled(let element, let id): return "cancelled to \(element.element.id) \(id)"
        }
    }

    @Test("every row of the table")
    func table() {
        let card = Self.makeCard()
        let rows: [(ContactRoute?, ContactRoute.Event, String, String)] = [
            (nil, .land(on: card, id: 4), "element card 4", "contact to card 4"),
            (nil, .land(on: nil, id: 0), "nowhere", "nothing"),
            (.nowhere, .land(on: card, id: 5), "element card 5", "contact to card 5"),
            (.element(card, id: 4), .land(on: card, id: 6), "nowhere", "cancelled to card 4"),
            (.element(card, id: 4), .move, "element card 4", "contact to card 4"),
            (.element(card, id: 4), .lift, "none", "contact to card 4"),
            (.element(card, id: 4), .takenByScreen, "taken from card 4", "nothing"),
            (.takenFromElement(card, id: 4), .move, "screen", "cancelled to card 4"),
            (.takenFromElement(card, id: 4), .land(on: nil, id: 0), "screen", "cancelled to card 4"),
            (.takenFromElement(card, id: 4), .lift, "none", "cancelled to card 4"),
            (.element(card, id: 4), .elementGone, "nowhere", "cancelled to card 4"),
            (.takenFromElement(card, id: 4), .elementGone, "nowhere", "cancelled to card 4"),
            (nil, .move, "nowhere", "nothing"),
            (nil, .takenByScreen, "screen", "nothing"),
            (.nowhere, .takenByScreen, "screen", "nothing"),
            (.nowhere, .lift, "none", "nothing"),
            (.screen, .lift, "none", "nothing"),
            (.screen, .move, "screen", "nothing"),
            (.screen, .land(on: card, id: 7), "screen", "nothing"),
            (.nowhere, .move, "nowhere", "nothing"),
            (.screen, .elementGone, "screen", "nothing"),
            // The pairs the table leaves to "any other pair": the route stays, nothing is heard.
            // A lift or an element going of a contact the router never saw leaves no record.
            (nil, .lift, "none", "nothing"),
            (nil, .elementGone, "none", "nothing"),
            // A second screen gesture taking a finger already taken: its element still hears it
            // cancelled at its next frame, once.
            (.takenFromElement(card, id: 4), .takenByScreen, "taken from card 4", "nothing"),
            (.screen, .takenByScreen, "screen", "nothing"),
            // A finger on no element is not the gone element's.
            (.nowhere, .elementGone, "nowhere", "nothing"),
        ]
        for (route, event, next, delivery) in rows {
            let outcome = ContactRoute.transition(route, event)
            #expect(Self.name(outcome.next) == next, "\(Self.name(route)) on \(event)")
            #expect(Self.name(outcome.delivery) == delivery, "\(Self.name(route)) on \(event)")
        }
        // Every route meets every event: 5 × 5 pairs.
        let pairs = Set(rows.map { "\(Self.kind($0.0)) \(Self.kind($0.1))" })
        #expect(pairs.count == 25, "missing: \(Self.allPairs.subtracting(pairs).sorted())")
    }

    static func kind(_ route: ContactRoute?) -> String {
        switch route {
        case nil: return "none"
        case .element?: return "element"
        case .takenFromElement?: return "taken from"
        case .nowhere?: return "nowhere"
        case .screen?: return "screen"
        }
    }

    static func kind(_ event: ContactRoute.Event) -> String {
        switch event {
        case .land: return "land"
        case .move: return "move"
        case .lift: return "lift"
        case .takenByScreen: return "takenByScreen"
        case .elementGone: return "elementGone"
        }
    }

    static let allPairs = Set(["none", "element", "taken from", "nowhere", "screen"].flatMap { route in
        ["land", "move", "lift", "takenByScreen", "elementGone"].map { "\(route) \($0)" }
    })

    @Test("the router: ids in landing order, a contact on another device is another contact, the screen takes every finger down")
    func router() {
        let card = Self.makeCard()
        var router = ContactRouter()
        func contact(_ id: Int32, _ phase: TouchPhase) -> TouchContact {
            TouchContact(slot: 0, trackingID: id, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: 100, y: 100))
        }
        let first = router.route(contact(7, .began), device: 0, hit: { _ in card })
        let second = router.route(contact(7, .began), device: 1, hit: { _ in card })
        #expect(first.finger == 1 && second.finger == 2, "two devices' 7s are two contacts, numbered in landing order")
        #expect(first.heard?.1.trackingID == 1 && second.heard?.1.trackingID == 2, "the card hears each under its number")
        #expect(router.route(contact(9, .began), device: 0, hit: { _ in nil }).heard == nil, "on no element")
        #expect(router.isAnyDown)
        router.takenByScreen([ContactKey(device: 0, trackingID: 7), ContactKey(device: 0, trackingID: 9)])
        let taken = router.route(contact(7, .moved), device: 0, hit: { _ in card })
        #expect(taken.heard?.1.phase == .cancelled && taken.heard?.1.trackingID == 1, "the card hears its finger cancelled once")
        #expect(router.route(contact(7, .moved), device: 0, hit: { _ in card }).heard == nil, "then nothing")
        #expect(router.route(contact(7, .moved), device: 1, hit: { _ in card }).heard?.1.phase == .moved, "the other device's finger is still the card's")
        var cancelled: [Int32] = []
        router.elementGone(card, into: &cancelled)
        #expect(cancelled == [2])
        for (id, device) in [(7, 0), (7, 1), (9, 0)] { _ = router.route(contact(Int32(id), .ended), device: device, hit: { _ in card }) }
        #expect(!router.isAnyDown, "every finger lifted")
    }

    @Test("finger numbers are per device and tracking id, last until the lift, are never reused, and carry over to a successor")
    func fingerNumbers() {
        var router = ContactRouter()
        func finger(_ id: Int32, _ phase: TouchPhase, device: Int) -> Int {
            router.route(TouchContact(slot: 0, trackingID: id, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: 0, y: 0)), device: device, hit: { _ in nil }).finger
        }
        let a = finger(1, .began, device: 0)
        let b = finger(1, .began, device: 1)
        #expect(a != b)
        #expect(finger(1, .moved, device: 0) == a)
        #expect(finger(1, .began, device: 0) == a, "a tracking id landing again without a lift is the same finger")
        #expect(finger(1, .ended, device: 0) == a)
        let c = finger(1, .began, device: 0)
        #expect(c != a && c != b, "the kernel reuses its tracking id; the number is new")
        // A screen gesture that takes a finger in the frame it lands in numbers nothing itself.
        router.takenByScreen([ContactKey(device: 2, trackingID: 5)])
        let d = finger(5, .began, device: 2)
        #expect(d == c + 1)
        var successor = router.handedOver
        let again = successor.route(TouchContact(slot: 0, trackingID: 1, phase: .moved, deviceX: 0, deviceY: 0, position: Point(x: 0, y: 0)), device: 1, hit: { _ in nil })
        #expect(again.finger == b, "a reload keeps the fingers' numbers")
        let next = successor.route(TouchContact(slot: 0, trackingID: 8, phase: .began, deviceX: 0, deviceY: 0, position: Point(x: 0, y: 0)), device: 0, hit: { _ in nil })
        #expect(next.finger == d + 1, "and goes on counting")
    }
}
