import TouchInput

/// A virtual touchscreen's device for tests: it keeps every event it is given, frame by frame
/// (each ending in `SYN_REPORT`), and reads them as libinput would (``LibinputModel``), so a
/// test says what the apps saw without uinput. It can refuse writes, as uinput does when the
/// device is gone.
package final class RecordingVirtualDevice: VirtualDeviceWriter {
    package let node: String
    package let syspath = ""
    /// Every frame written, in order, as (type, code, value) with the time left at 0.
    package private(set) var frames: [[InputEvent]] = []
    /// When each write was given, on the monotonic clock, refused ones included: what a
    /// frame's latency is measured against.
    package private(set) var writeTimes: [Double] = []
    /// The stamp each write was given (nil: the kernel's), refused ones included.
    package private(set) var stamps: [Double?] = []
    /// What libinput made of every frame written.
    package private(set) var libinput: LibinputModel
    /// The errno the next writes are refused with (0: written short); nil writes them.
    package var refusing: Int32?
    package private(set) var isClosed = false
    /// Writes given after ``close()``: a device removed is never written to.
    package private(set) var writesAfterClose = 0
    /// Where ``takeSeen()`` last stopped.
    private var seenBefore = 0
    /// The time each write is stamped with (a test's clock); nil stamps nothing.
    package var clock: (() -> Double)?
    /// When each of libinput's ``LibinputModel/seen`` was written, by ``clock``.
    package private(set) var seenTimes: [Double] = []

    package init(node: String = "/dev/input/event99", slots: Int = VirtualTouchEncoder.defaultSlotCount) {
        self.node = node
        self.libinput = LibinputModel(slots: slots)
    }

    package func write(_ events: [InputEvent], stamped time: Double?) -> Int32? {
        writeTimes.append(monotonicNow())
        stamps.append(time)
        if isClosed { writesAfterClose += 1 }
        if let refusing { return refusing }
        libinput.read(events)
        if let clock { seenTimes += Array(repeating: clock(), count: libinput.seen.count - seenTimes.count) }
        var frame: [InputEvent] = []
        for event in events {
            frame.append(event)
            if event.type == EventType.synchronization && event.code == SynchronizationCode.report {
                frames.append(frame)
                frame = []
            }
        }
        if !frame.isEmpty { frames.append(frame) }
        return nil
    }

    package func close() { isClosed = true }

    /// What libinput saw since the last call: touches down, moved, up and cancelled.
    package func takeSeen() -> [LibinputModel.Seen] {
        defer { seenBefore = libinput.seen.count }
        return Array(libinput.seen[seenBefore...])
    }
}
