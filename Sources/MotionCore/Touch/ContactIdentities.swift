/// Numbers for contacts that clients can keep: one per finger, from its landing to its lift,
/// across every device, never reused while the process runs. The kernel's tracking ids are
/// per device and are reused; published contacts (and TUIO's session ids) need better.
public struct ContactIdentities: Sendable {
    private struct Key: Hashable {
        var device: Int
        var trackingID: Int32
    }

    private var live: [Key: Int] = [:]
    private var next = 1

    public init() {}

    /// The number of `contact` on `device`, given when it is first seen; forgotten when the
    /// contact ends, so the next finger with the same tracking id gets a new number.
    public mutating func identity(of contact: TouchContact, device: Int) -> Int {
        let key = Key(device: device, trackingID: contact.trackingID)
        let id = live[key] ?? next
        if id == next { next += 1 }
        if contact.phase.isActive { live[key] = id } else { live[key] = nil }
        return id
    }

    /// Forgets every contact of `device` (it went away).
    public mutating func forget(device: Int) {
        live = live.filter { $0.key.device != device }
    }

    /// Forgets every contact, keeping the count: numbers given stay unused.
    public mutating func forgetAll() {
        live = [:]
    }

    /// How many contacts are down.
    public var count: Int { live.count }
}
