import MotionCore
import TouchInput

/// Touchscreens like the ones in the fixtures: multitouch with slots, multitouch without
/// `ABS_MT_SLOT` (protocol A, through libmtdev), and single touch.
private let devices: [DeviceDescription] = {
    func device(_ name: String, multitouch: Bool, slots: Int32?, x: AxisInfo, y: AxisInfo, extra: [UInt16] = []) -> DeviceDescription {
        var description = DeviceDescription(name: name)
        description.properties = [InputProperty.direct]
        var absolute: Set<UInt16> = Set(extra)
        if multitouch {
            description.axes[AbsoluteAxis.positionX] = x
            description.axes[AbsoluteAxis.positionY] = y
            absolute.formUnion([AbsoluteAxis.positionX, AbsoluteAxis.positionY, AbsoluteAxis.trackingID])
            description.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
            if let slots {
                description.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: slots - 1)
                absolute.insert(AbsoluteAxis.slot)
            }
        }
        description.axes[AbsoluteAxis.x] = x
        description.axes[AbsoluteAxis.y] = y
        absolute.formUnion([AbsoluteAxis.x, AbsoluteAxis.y])
        for code in extra where description.axes[code] == nil { description.axes[code] = AxisInfo(minimum: 0, maximum: 255) }
        description.codes[EventType.absolute] = absolute
        description.codes[EventType.key] = [KeyCode.touch]
        description.codes[EventType.synchronization] = [0]
        return description
    }
    return [
        device("atmel-like", multitouch: true, slots: 10, x: AxisInfo(value: 0, minimum: 0, maximum: 4095, fuzz: 8, flat: 0, resolution: 16),
               y: AxisInfo(value: 0, minimum: 0, maximum: 4095, fuzz: 8, flat: 0, resolution: 16),
               extra: [AbsoluteAxis.multitouchPressure, AbsoluteAxis.touchMajor, AbsoluteAxis.touchMinor, AbsoluteAxis.toolType]),
        device("elan-like", multitouch: true, slots: 2, x: AxisInfo(minimum: 0, maximum: 3200, resolution: 12), y: AxisInfo(minimum: 0, maximum: 2000, resolution: 0)),
        device("no-slots", multitouch: true, slots: nil, x: AxisInfo(minimum: -100, maximum: 100), y: AxisInfo(minimum: 50, maximum: 60)),
        device("single-touch", multitouch: false, slots: nil, x: AxisInfo(minimum: 0, maximum: 1023), y: AxisInfo(minimum: 0, maximum: 767), extra: [AbsoluteAxis.pressure]),
        device("two-units", multitouch: true, slots: 1, x: AxisInfo(minimum: 5, maximum: 6), y: AxisInfo(minimum: 0, maximum: 1, resolution: 1)),
    ]
}()

/// The codes that matter to the assembler, so most events mean something to it.
private let absoluteCodes: [UInt16] = [
    AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY,
    AbsoluteAxis.toolType, AbsoluteAxis.multitouchPressure, AbsoluteAxis.touchMajor, AbsoluteAxis.touchMinor,
    AbsoluteAxis.x, AbsoluteAxis.y, AbsoluteAxis.pressure,
]

/// The frame assembler and the coordinate mapper fed any evdev event stream. The first
/// bytes choose a device, a mapping and the contact filters; then each event is an
/// operation byte, a code and a value. Every frame has finite positions inside the output,
/// contacts in distinct slots among the device's, and times that never go back.
func fuzzAssembler(_ bytes: [UInt8]) throws {
    var input = FuzzBytes(bytes)
    let device = devices[Int(input.byte()) % devices.count]
    let (mapping, filters) = mappingAndFilters(input.byte())
    // Live devices and recordings are validated before they reach the assembler; so are these.
    try fuzzCheck(device.problems.isEmpty, "the fuzz device \(device.name) is invalid: \(device.problems)")
    var assembler = TouchFrameAssembler(description: device, mapping: mapping, filters: filters)
    let output = assembler.mapper.outputSize, origin = mapping.outputOrigin
    let slotCount = device.isMultitouch ? max(device.slotCount, 1) : 1
    var time = 0.0, lastFrameTime = -Double.infinity
    func check(_ frame: TouchFrame?) throws {
        guard let frame else { return }
        try fuzzCheck(frame.time >= lastFrameTime, "a frame at \(frame.time) after one at \(lastFrameTime)")
        lastFrameTime = frame.time
        var slots = Set<Int>()
        for contact in frame.contacts {
            let p = contact.position
            try fuzzCheck(p.x.isFinite && p.y.isFinite, "a position that is not finite: \(contact)")
            try fuzzCheck((origin.x...origin.x + output.width).contains(p.x) && (origin.y...origin.y + output.height).contains(p.y), "\(p) outside \(output) at \(origin): \(contact)")
            if let mm = contact.millimetres { try fuzzCheck(mm.x.isFinite && mm.y.isFinite, "millimetres that are not finite: \(contact)") }
            try fuzzCheck((0..<slotCount).contains(contact.slot), "slot \(contact.slot) on a device with \(slotCount): \(contact)")
            if contact.phase.isActive { try fuzzCheck(slots.insert(contact.slot).inserted, "two active contacts in slot \(contact.slot)") }
        }
    }
    while !input.isEmpty {
        let operation = input.byte()
        time += Double(operation >> 4) / 1000
        let selector = input.byte()
        let value = operation & 8 != 0 ? input.int32() : Int32(Int8(bitPattern: input.byte()))
        switch operation & 7 {
        case 0, 1, 2:
            let code = absoluteCodes[Int(selector) % absoluteCodes.count]
            try check(assembler.consume(InputEvent(time: time, type: EventType.absolute, code: code, value: value)))
        case 3:
            // SYN_REPORT, or protocol A's SYN_MT_REPORT between contacts.
            let code = selector & 1 == 0 ? SynchronizationCode.report : SynchronizationCode.multitouchReport
            try check(assembler.consume(InputEvent(time: time, type: EventType.synchronization, code: code, value: 0)))
        case 4:
            try check(assembler.consume(InputEvent(time: time, type: EventType.key, code: selector & 1 == 0 ? KeyCode.touch : KeyCode.toolFinger, value: value)))
        case 5:
            try check(assembler.consume(InputEvent(time: time, type: UInt16(selector & 0x1f), code: UInt16(selector), value: value)))
        case 6:
            if selector & 2 != 0 {
                // Time passing with no event: stuck contacts are cancelled when it is due.
                if let deadline = assembler.nextDeadline, deadline <= time { try check(assembler.expire(at: time)) }
            } else if selector & 1 == 0 { assembler.beginResync() } else { assembler.endResync() }
        default:
            if selector & 1 == 0 {
                try check(assembler.consume(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.dropped, value: 0)))
            } else {
                try check(assembler.cancelAll(at: time))
            }
        }
    }
}

/// The mapping and the contact filters one byte of the input chooses: a rotation, flips, an
/// output size and origin, and the filters at their defaults, all off, or quick to call a
/// contact stuck.
private func mappingAndFilters(_ choice: UInt8) -> (OutputMapping, ContactFilterSettings) {
    var mapping = OutputMapping()
    mapping.rotation = Rotation.allCases[Int(choice & 3)]
    mapping.flipHorizontal = choice & 4 != 0
    mapping.flipVertical = choice & 8 != 0
    if choice & 16 != 0 { mapping.outputSize = Size(width: 1920, height: 1080) }
    if choice & 128 != 0 { mapping.outputOrigin = Point(x: 1920, y: 0) }
    var filters = ContactFilterSettings()
    if choice & 32 != 0 { filters.stuckAfter = 0.05 }
    if choice & 64 != 0 { filters = .off }
    return (mapping, filters)
}
