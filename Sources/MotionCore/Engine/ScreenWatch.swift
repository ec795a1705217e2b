/// The screen's own gestures (`[[screen_gesture]]`), watched over every device's contacts at
/// once: each device's frame is merged with the contacts the other devices have down (as
/// they last were), under ids unique on the screen.
final class ScreenWatch {
    private var gestures: ScreenGestures
    /// `screen.gesture`.
    let stream: StreamID
    /// Every contact down, as last seen, with its id on the screen.
    private var contacts: [ContactKey: TouchContact] = [:]
    private var nextID: Int32 = 0
    private var merged: [TouchContact] = []

    init(_ gestures: ScreenGestures, stream: StreamID) {
        self.gestures = gestures
        self.stream = stream
    }

    /// The contacts down on the screen now.
    var down: Dictionary<ContactKey, TouchContact>.Keys { contacts.keys }

    /// Takes one device's frame.
    func take(_ frame: TouchFrame, device: Int, into events: inout [ScreenGestureEvent]) {
        merged.removeAll(keepingCapacity: true)
        for (key, contact) in contacts where key.device != device {
            var still = contact
            still.phase = .stationary
            merged.append(still)
        }
        for contact in frame.contacts {
            let key = ContactKey(device: device, trackingID: contact.trackingID)
            var onScreen = contact
            if let known = contacts[key] {
                onScreen.trackingID = known.trackingID
            } else {
                onScreen.trackingID = nextID
                nextID = nextID == .max ? 0 : nextID + 1
            }
            contacts[key] = contact.phase.isActive ? onScreen : nil
            merged.append(onScreen)
        }
        var screenFrame = TouchFrame(time: frame.time, contacts: [])
        swap(&screenFrame.contacts, &merged)
        gestures.update(screenFrame, into: &events)
        swap(&screenFrame.contacts, &merged)
    }

    /// A reload: `heir`, the new engine's watch (nil when the new configuration watches for
    /// nothing), takes over the fingers down under the same ids, and the gestures its patterns
    /// keep; the others end, into `events` (``ScreenGestures/handOver(to:at:into:)``).
    func handOver(to heir: ScreenWatch?, at time: Double, into events: inout [ScreenGestureEvent]) {
        if let heir {
            heir.contacts = contacts
            heir.nextID = nextID
            gestures.handOver(to: &heir.gestures, at: time, into: &events)
        } else {
            var none = ScreenGestures([], screen: Size(width: 0, height: 0), thresholds: GestureThresholds())
            gestures.handOver(to: &none, at: time, into: &events)
        }
    }

    /// A lock: the gestures in progress end, into `events`, and the fingers down are
    /// forgotten (``ScreenGestures/restart(at:into:)``); the watch sees none of them again.
    func forgetFingers(at time: Double, into events: inout [ScreenGestureEvent]) {
        gestures.restart(at: time, into: &events)
        contacts.removeAll()
    }

    /// When a long press held still is due.
    var nextDeadline: Double? { gestures.nextDeadline }

    /// Time passed with no frame.
    func advance(to time: Double, into events: inout [ScreenGestureEvent]) {
        gestures.advance(to: time, into: &events)
    }
}
