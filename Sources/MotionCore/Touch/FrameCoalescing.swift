/// Frames that queued up while the daemon was busy (clients outrunning it, input faster than
/// it can process), cut down to the newest state without losing a touch.
///
/// A frame in which no touch begins or ends only moves fingers that the device's next frame
/// reports again (protocol B reports every finger down in every frame), so when a later
/// frame of the same device is already waiting, that frame can go: gestures see the newer
/// positions a little sooner, and every landing and lift still arrives, in order. Anything
/// else in the queue (a device added or removed) is a barrier nothing is coalesced across.
public enum FrameCoalescing {
    /// One entry of an input queue: a device's frame, or something else.
    public enum Entry {
        case frame(device: Int, TouchFrame)
        case barrier
    }

    /// Which entries to process, in order: true to keep. Only frames are ever dropped.
    public static func keep(_ entries: [Entry]) -> [Bool] {
        var keep = [Bool](repeating: true, count: entries.count)
        // Devices with a frame later in the queue (and before the next barrier).
        var later: [Int] = []
        for index in entries.indices.reversed() {
            switch entries[index] {
            case .barrier:
                later.removeAll(keepingCapacity: true)
            case let .frame(device, frame):
                if later.contains(device) {
                    keep[index] = frame.contacts.contains { $0.phase != .moved && $0.phase != .stationary }
                } else {
                    later.append(device)
                }
            }
        }
        return keep
    }
}
