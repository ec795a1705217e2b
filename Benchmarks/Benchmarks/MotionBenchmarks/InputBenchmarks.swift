import Benchmark
import Foundation
import MotionCore
import TouchInput

/// The biggest recording among the test fixtures: two fingers, 695 events, 98 frames.
let biggestRecording = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
    .appendingPathComponent("Tests/Fixtures/recordings/whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu")

/// What reading touch input costs: one frame through the assembler (the work per frame of a
/// live device, after libevdev), and parsing a recording.
func inputBenchmarks() {
    Benchmark("Frame assembly, one frame of the 2-finger ep0430 recording", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let recording = try! EvemuRecording(parsing: String(contentsOf: biggestRecording, encoding: .utf8))
        var assembler = TouchFrameAssembler(description: recording.device!)
        let events = recording.events
        // Steady state: the recording ends with every finger up, so it loops seamlessly.
        measureAssembly(benchmark, &assembler, events)
    }

    Benchmark("Parse the ep0430 recording (695 events)") { benchmark in
        let text = try! String(contentsOf: biggestRecording, encoding: .utf8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try! EvemuRecording(parsing: text))
        }
        benchmark.stopMeasurement()
    }

    filterBenchmarks()
    virtualTouchscreenBenchmarks()
}

/// What a virtual touchscreen adds per input frame, beside the publisher's cost: the fingers
/// of a frame turned into its events (the `write(2)` is the kernel's).
func virtualTouchscreenBenchmarks() {
    for fingers in [2, 10] {
        Benchmark("Virtual touchscreen, one frame: \(fingers) fingers moving", configuration: .init(scalingFactor: .kilo)) { benchmark in
            var encoder = VirtualTouchEncoder(geometry: VirtualTouchscreenGeometry(area: Rect(x: 0, y: 0, width: 1920, height: 1080)))
            var events: [InputEvent] = []
            events.reserveCapacity(64 * fingers)
            var contacts = (1...fingers).map { VirtualContact(finger: $0, phase: .began, position: Point(x: Double(150 * $0), y: 500)) }
            encoder.encode(contacts, at: 0, into: &events)
            for index in contacts.indices { contacts[index].phase = .moved }
            var step = 0.0
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                step += 1
                for index in contacts.indices { contacts[index].position.y = 500 + step.truncatingRemainder(dividingBy: 300) }
                events.removeAll(keepingCapacity: true)
                encoder.encode(contacts, at: step / 100, into: &events)
                blackHole(events.count)
            }
            benchmark.stopMeasurement()
        }
    }
}

/// Measures one frame a scaled iteration: `events` fed round and round (they must end with
/// every finger up) until the assembler completes a frame. Each round comes later than the
/// last, as a panel's time goes on: the same times again would be a flood of new contacts
/// within one instant, a storm to the phantom filters.
func measureAssembly(_ benchmark: Benchmark, _ assembler: inout TouchFrameAssembler, _ events: [InputEvent]) {
    var index = 0
    var offset = 0.0
    let round = (events.last?.time ?? 0) - (events.first?.time ?? 0) + 0.01
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        var frame: TouchFrame?
        while frame == nil {
            var event = events[index]
            event.time += offset
            frame = assembler.consume(event)
            index += 1
            if index == events.count { index = 0; offset += round }
        }
        blackHole(frame)
    }
    benchmark.stopMeasurement()
}

/// What the contact filters (``ContactFilterSettings``) add to each frame: assembly with none,
/// with each alone (the phantom filters together), and with all at their defaults, with and
/// without the phantom filters (what they add where the filter stage runs anyway), for 2 and
/// for 10 fingers, on an ordinary panel and on one taken for an infrared frame. The ep0430
/// recording above has neither resolution nor fuzz nor touch major, so there only the stuck
/// filter is on; here a panel where every filter has work. No filter cancels a contact in
/// this stream, so every case assembles the same frames and the difference from `off` is
/// the filters' own cost.
func filterBenchmarks() {
    func only(_ settings: ContactFilterSettings, phantoms: PhantomTouchSettings = .off) -> ContactFilterSettings {
        var settings = settings
        settings.phantoms = phantoms
        return settings
    }
    let infrared = PhantomTouchSettings(infrared: true)
    let filterCases: [(name: String, settings: ContactFilterSettings)] = [
        ("off", .off),
        ("stuck only", only(ContactFilterSettings(stuckAfter: 30, palmSize: .off, jumpMillimetres: 0, hysteresis: false))),
        ("palm only", only(ContactFilterSettings(stuckAfter: 0, palmSize: .millimetres(30), jumpMillimetres: 0, hysteresis: false))),
        ("jump only", only(ContactFilterSettings(stuckAfter: 0, palmSize: .off, jumpMillimetres: 50, hysteresis: false))),
        ("hysteresis only", only(ContactFilterSettings(stuckAfter: 0, palmSize: .off, jumpMillimetres: 0, hysteresis: true))),
        ("phantoms only", only(.off, phantoms: PhantomTouchSettings())),
        ("phantoms only, an infrared frame", only(.off, phantoms: infrared)),
        ("all defaults but the phantom filters", only(ContactFilterSettings())),
        ("all defaults", ContactFilterSettings()),
        ("all defaults, an infrared frame", only(ContactFilterSettings(), phantoms: infrared)),
    ]
    for fingers in [2, 10] {
        let events = circlingFingers(fingers)
        for (name, settings) in filterCases {
            Benchmark("Frame assembly, one frame of \(fingers) circling fingers, filters: \(name)", configuration: .init(scalingFactor: .kilo)) { benchmark in
                var assembler = TouchFrameAssembler(description: filterPanel, filters: settings)
                precondition(assembler.resolvedFilters.notes.isEmpty, "\(assembler.resolvedFilters.notes)")
                // One pass first: the filters' output frame grows to its size, once per assembler.
                for event in events { blackHole(assembler.consume(event)) }
                measureAssembly(benchmark, &assembler, events)
                let counts = assembler.filterCounts
                let phantoms = counts.deadZone + counts.phantomTaps + counts.bursts + counts.stormContacts + counts.ghosts + counts.flips
                precondition(counts.stuck + counts.palms + counts.jumps + phantoms == 0, "a filter cancelled or held back a contact: \(counts)")
            }
        }
    }
}

/// A made-up panel on which every contact filter is on by default: 0…4095 on both axes at
/// 10 units/mm (409.6 mm square), fuzz 8 (a 4-unit hysteresis margin), 10 slots, and
/// `ABS_MT_TOUCH_MAJOR` 0…1000 (in the position axes' units: 30 mm is 300).
let filterPanel: DeviceDescription = {
    var device = DeviceDescription(name: "filter benchmark panel")
    device.properties = [InputProperty.direct]
    device.codes[EventType.synchronization] = [SynchronizationCode.report]
    device.codes[EventType.absolute] = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY, AbsoluteAxis.touchMajor]
    device.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
    device.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
    device.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: 4095, fuzz: 8, resolution: 10)
    device.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: 4095, fuzz: 8, resolution: 10)
    device.axes[AbsoluteAxis.touchMajor] = AxisInfo(minimum: 0, maximum: 1000)
    return device
}()

/// `fingers` fingers (up to 10) that land, each go once round a circle of 20 mm radius in
/// one second at 120 Hz (about 1 mm a frame, past the hysteresis margin, far below a jump),
/// 7 to 9 mm wide (far below a palm), and lift: 122 frames, ending with every finger up so
/// that the stream loops. As the kernel sends them: an axis only when its value changes.
func circlingFingers(_ fingers: Int) -> [InputEvent] {
    var events: [InputEvent] = []
    func send(_ time: Double, _ code: UInt16, _ value: Int32) {
        events.append(InputEvent(time: time, type: EventType.absolute, code: code, value: value))
    }
    var last = Array(repeating: (x: Int32(-1), y: Int32(-1), major: Int32(-1)), count: fingers)
    let frames = 120
    for frame in 0...frames + 1 {
        let time = Double(frame) / 120
        for finger in 0..<fingers {
            send(time, AbsoluteAxis.slot, Int32(finger))
            if frame == frames + 1 {
                send(time, AbsoluteAxis.trackingID, -1)
                continue
            }
            if frame == 0 { send(time, AbsoluteAxis.trackingID, Int32(finger)) }
            let angle = 2 * Double.pi * Double(frame) / Double(frames) + Double(finger)
            let x = Int32(400 + 800 * Double(finger % 5) + 200 * cos(angle))
            let y = Int32(1000 + 2000 * Double(finger / 5) + 200 * sin(angle))
            let major = Int32(80 + 10 * sin(3 * angle))
            if x != last[finger].x { send(time, AbsoluteAxis.positionX, x) }
            if y != last[finger].y { send(time, AbsoluteAxis.positionY, y) }
            if major != last[finger].major { send(time, AbsoluteAxis.touchMajor, major) }
            last[finger] = (x, y, major)
        }
        events.append(InputEvent(time: time, type: EventType.synchronization, code: SynchronizationCode.report, value: 0))
    }
    return events
}
