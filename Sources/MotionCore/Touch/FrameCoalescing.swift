/// Frames that queued up while the daemon was busy (clients outrunning it, input faster than
/// it can process), cut down to the newest state without losing a touch.
///
/// A frame in which no touch begins or ends only moves fingers that the device's next frame
/// reports again (protocol B reports every finger down in every frame), so when the next
/// frame of the same device is already waiting and only moves fingers too, that frame can
/// go: gestures see the newer positions a little sooner, and every landing and lift still
/// arrives, in order. The newest move before a landing or a lift stays: a recognizer begins
/// a drag on a move, not on a lift, so a quick flick whose moves were all left out would
/// reach the scene as a finger that landed and lifted without moving, and toss nothing.
/// (The kernel lab found this: a fling played on a real device to a daemon that was behind.)
/// Anything else in the queue (a device added or removed) is a barrier nothing is
/// coalesced across.
public enum FrameCoalescing {
    /// One entry of an input queue: a device's frame, or something else.
    public enum Entry {
        case frame(device: Int, TouchFrame)
        case barrier
    }

    /// Which entries to process, in order: true to keep. Only frames are ever dropped.
    public static func keep(_ entries: [Entry]) -> [Bool] {
        var keep = [Bool](repeating: true, count: entries.count)
        // Devices with a frame later in the queue (and before the next barrier), and whether
        // that next frame only moves fingers.
        var later: [(device: Int, movesOnly: Bool)] = []
        for index in entries.indices.reversed() {
            switch entries[index] {
            case .barrier:
                later.removeAll(keepingCapacity: true)
            case let .frame(device, frame):
                let movesOnly = !frame.contacts.contains { $0.phase != .moved && $0.phase != .stationary }
                if let next = later.firstIndex(where: { $0.device == device }) {
                    keep[index] = !(movesOnly && later[next].movesOnly)
                    later[next].movesOnly = movesOnly
                } else {
                    later.append((device, movesOnly))
                }
            }
        }
        return keep
    }
}
