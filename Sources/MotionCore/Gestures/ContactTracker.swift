import Glibc

/// One contact as a recognizer sees it: where it is on screen and in physical units.
public struct TrackedContact: Hashable, Sendable {
    /// The contact's tracking id.
    public var id: Int32
    /// Screen pixels.
    public var position: Point
    /// Millimetres when the device knows its resolution, else the same pixels.
    public var physical: Point
}

/// What changed between two frames for a set of contacts: the comparison every recognizer
/// starts from.
///
/// Movement is measured on the contacts present in both frames (including one that lifts
/// in this frame, at its lift position), so a finger landing or lifting never makes a
/// gesture's value jump: the gesture is re-based on the new set of fingers.
public struct ContactTracker: Sendable {
    /// The contacts down after the last frame, in the order they landed.
    public private(set) var active: [TrackedContact] = []
    /// Whether positions are millimetres (every contact reported them).
    public private(set) var isPhysical = false
    /// The unit positions are measured in: what a threshold is taken in.
    public var unit: DistanceUnit { DistanceUnit(physical: isPhysical) }

    /// The same contacts before and after one frame.
    public private(set) var persistent: [(before: TrackedContact, after: TrackedContact)] = []
    /// How many contacts landed and lifted in the last frame.
    public private(set) var landed = 0
    public private(set) var lifted = 0
    /// Whether a contact was cancelled in the last frame.
    public private(set) var cancelled = false
    /// The centroid, in pixels, of the contacts in the last frame, including those that
    /// lifted in it: where a gesture that just ended was.
    public private(set) var centroid = Point.zero

    private var next: [TrackedContact] = []

    /// Creates an empty tracker.
    public init() {}

    /// Takes the next frame.
    public mutating func update(_ frame: TouchFrame) {
        persistent.removeAll(keepingCapacity: true)
        next.removeAll(keepingCapacity: true)
        landed = 0
        lifted = 0
        cancelled = false
        if active.isEmpty {
            isPhysical = !frame.contacts.isEmpty && frame.contacts.allSatisfy { $0.millimetres != nil }
        }
        // Keep the landing order: contacts already down first, then new ones.
        for before in active {
            guard let contact = frame.contacts.first(where: { $0.trackingID == before.id }) else {
                lifted += 1  // vanished without an end: treat as lifted where it was
                continue
            }
            let after = tracked(contact)
            switch contact.phase {
            case .cancelled:
                cancelled = true
            case .ended:
                persistent.append((before, after))
                lifted += 1
            case .began, .moved, .stationary:
                persistent.append((before, after))
                next.append(after)
            }
        }
        for contact in frame.contacts where contact.phase == .began && !active.contains(where: { $0.id == contact.trackingID }) {
            next.append(tracked(contact))
            landed += 1
        }
        swap(&active, &next)
        var sum = Point.zero
        for pair in persistent { sum = sum + pair.after.position }
        for contact in active.suffix(landed) { sum = sum + contact.position }
        let present = persistent.count + landed
        if present > 0 { centroid = sum / Double(present) }
    }

    /// Whether a finger still down has moved further than `slop` (in `physical` units) from
    /// where it landed: how a tap and a long press fail.
    public func anyMoved(from landings: [Int32: Point], beyond slop: Double) -> Bool {
        persistent.contains { pair in
            guard let landing = landings[pair.after.id] else { return false }
            return pair.after.physical.distance(to: landing) > slop
        }
    }

    /// Where positions are measured.
    public enum Space: Sendable {
        /// Millimetres where the device knows them, else pixels: true distances and angles.
        case physical
        /// Screen pixels: where elements are drawn.
        case screen
    }

    /// How the contacts present before and after the last frame moved, as seen from their
    /// centroid: the recognizers' pinch and rotation, and direct manipulation, read it.
    public struct Motion: Sendable {
        /// The centroid before and after the frame.
        public var before: Point
        public var after: Point
        /// The mean distance from the centroid (the spread) before and after.
        public var spanBefore: Double
        public var spanAfter: Double
        /// The turn about the centroid, radians, clockwise: each contact's change of angle
        /// wrapped to (−π, π] and averaged, weighted by its distance from the centroid
        /// (contacts near it turn erratically). Nil with fewer than two contacts, or none
        /// away from the centroid.
        public var rotation: Double?

        /// The motion of `count` points, the `index`th from `point(index).before` to
        /// `.after`; nil for none. Also how touch prediction carries an element along its
        /// fingers' predicted moves.
        static func of(count: Int, _ point: (Int) -> (before: Point, after: Point)) -> Motion? {
            guard count > 0 else { return nil }
            let n = Double(count)
            var before = Point.zero, after = Point.zero
            for index in 0..<count {
                let pair = point(index)
                before = before + pair.before
                after = after + pair.after
            }
            before = before / n
            after = after / n
            var spanBefore = 0.0, spanAfter = 0.0, turn = 0.0, weights = 0.0
            for index in 0..<count {
                let pair = point(index)
                let rb = pair.before - before, ra = pair.after - after
                spanBefore += rb.length
                spanAfter += ra.length
                let weight = rb.length * ra.length
                if weight > 0 {
                    turn += weight * ContactTracker.wrap(atan2(ra.y, ra.x) - atan2(rb.y, rb.x))
                    weights += weight
                }
            }
            let rotation = count >= 2 && weights > 0 ? turn / weights : nil
            return Motion(before: before, after: after, spanBefore: spanBefore / n, spanAfter: spanAfter / n, rotation: rotation)
        }
    }

    /// The motion of the persistent contacts in the last frame, or nil when there are none.
    public func persistentMotion(in space: Space) -> Motion? {
        func place(_ contact: TrackedContact) -> Point { space == .physical ? contact.physical : contact.position }
        return Motion.of(count: persistent.count) { (place(persistent[$0].before), place(persistent[$0].after)) }
    }

    /// An angle wrapped to (−π, π].
    static func wrap(_ angle: Double) -> Double {
        var a = angle.truncatingRemainder(dividingBy: 2 * .pi)
        if a <= -.pi { a += 2 * .pi }
        if a > .pi { a -= 2 * .pi }
        return a
    }

    /// Forgets every contact.
    public mutating func reset() {
        active.removeAll(keepingCapacity: true)
        persistent.removeAll(keepingCapacity: true)
        landed = 0
        lifted = 0
        cancelled = false
    }

    /// The mean movement of the persistent contacts in this frame: pixels and physical units.
    public var meanMovement: (position: Point, physical: Point) {
        guard !persistent.isEmpty else { return (.zero, .zero) }
        var position = Point.zero, physical = Point.zero
        for pair in persistent {
            position = position + (pair.after.position - pair.before.position)
            physical = physical + (pair.after.physical - pair.before.physical)
        }
        let n = Double(persistent.count)
        return (position / n, physical / n)
    }

    private func tracked(_ contact: TouchContact) -> TrackedContact {
        TrackedContact(
            id: contact.trackingID, position: contact.position,
            physical: isPhysical ? (contact.millimetres ?? contact.position) : contact.position)
    }
}
