import TouchInput

/// What a libinput touchscreen reader makes of the events, written from libinput's fallback
/// dispatch (evdev-fallback.c): the kernel's per-slot state as libevdev keeps it (the tool a
/// slot last said sticks), a touch down at a tracking id, up at -1, and a cancel when a touch
/// already down turns `MT_TOOL_PALM`; a touch that begins while its slot says palm is ignored.
/// A touch down in a slot whose touch was released in the same frame is a kernel bug to
/// libinput ("driver sent multiple touch down for the same slot"): it drops the new touch.
package struct LibinputModel {
    package enum Seen: Equatable {
        case down(slot: Int, x: Int32, y: Int32)
        case motion(slot: Int, x: Int32, y: Int32)
        case up(slot: Int)
        case cancel(slot: Int)
    }

    private struct Slot {
        var tracking: Int32 = -1
        var tool = ToolType.finger
        var x: Int32 = 0, y: Int32 = 0
        var dirty = false
        var began = false
        var palm = false
        var ignored = false
        /// Released since the last `SYN_REPORT`.
        var released = false
    }

    private var slots: [Slot]
    private var current = 0
    package var seen: [Seen] = []
    package var button = false
    package var pointer: (x: Int32, y: Int32) = (0, 0)
    package var frames = 0
    package var problems: [String] = []

    package init(slots: Int) { self.slots = Array(repeating: Slot(), count: slots) }

    package mutating func read(_ events: [InputEvent]) {
        for event in events { take(event) }
    }

    private mutating func take(_ event: InputEvent) {
        switch (event.type, event.code) {
        case (EventType.absolute, AbsoluteAxis.slot):
            current = Int(event.value)
            if current >= slots.count { problems.append("slot \(current) past the device's") }
        case (EventType.absolute, AbsoluteAxis.trackingID):
            if event.value >= 0 {
                if slots[current].tracking >= 0 { problems.append("tracking id over a live one in slot \(current)") }
                if slots[current].released { problems.append("multiple touch down for the same slot \(current) in one frame") }
                slots[current].tracking = event.value
                slots[current].began = true
                slots[current].ignored = slots[current].tool == ToolType.palm
                slots[current].palm = false
            } else {
                if slots[current].tracking < 0 { problems.append("release of an empty slot \(current)") }
                slots[current].tracking = -1
                slots[current].released = true
                let wasShown = !slots[current].ignored && !slots[current].palm && !slots[current].began
                if wasShown { seen.append(.up(slot: current)) }
                slots[current].began = false
            }
        case (EventType.absolute, AbsoluteAxis.toolType):
            slots[current].tool = event.value
            if event.value == ToolType.palm, slots[current].tracking >= 0, !slots[current].began, !slots[current].ignored, !slots[current].palm {
                slots[current].palm = true
                seen.append(.cancel(slot: current))
            }
        case (EventType.absolute, AbsoluteAxis.positionX):
            slots[current].x = event.value
            slots[current].dirty = true
        case (EventType.absolute, AbsoluteAxis.positionY):
            slots[current].y = event.value
            slots[current].dirty = true
        case (EventType.absolute, AbsoluteAxis.x): pointer.x = event.value
        case (EventType.absolute, AbsoluteAxis.y): pointer.y = event.value
        case (EventType.key, KeyCode.touch): button = event.value == 1
        case (EventType.synchronization, SynchronizationCode.report):
            frames += 1
            for index in slots.indices {
                defer { slots[index].dirty = false; slots[index].began = false; slots[index].released = false }
                guard slots[index].tracking >= 0, !slots[index].ignored, !slots[index].palm else { continue }
                if slots[index].began {
                    seen.append(.down(slot: index, x: slots[index].x, y: slots[index].y))
                } else if slots[index].dirty {
                    seen.append(.motion(slot: index, x: slots[index].x, y: slots[index].y))
                }
            }
            if button != slots.contains(where: { $0.tracking >= 0 }) { problems.append("BTN_TOUCH \(button) with slots \(slots.map(\.tracking))") }
        default:
            problems.append("an event no touchscreen sends: \(event.type) \(event.code)")
        }
    }
}
