import ArgumentParser
import FoundationEssentials
import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// `motionctl gestures`: what the recognizers make of a recording, event by event. The tool
/// to reach for when a gesture on a panel misbehaves.
struct GesturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gestures",
        abstract: "Replay a recording through the gesture recognizers and print every event.",
        discussion: """
            All contacts go to one full-screen element, whose drag, pinch, rotation and tap \
            recognizers run together (drag, pinch and rotation simultaneously; a tap fails \
            when one of them begins); long_press, swipe and edge_swipe run when named in \
            --recognizers. Contacts are mapped onto the screen as the daemon maps \
            them (the configuration's [[device]] entry and screen, or the built-in \
            1920 × 1080 screen), so the thresholds and the output are in screen pixels, \
            whatever units the panel reports. Rotations are in radians (clockwise \
            positive), velocities per second, times in seconds from the first event.
            """
    )

    @Argument(help: "A recording: evemu, or libinput record YAML.") var recording: String
    @OptionGroup var device: RecordingDeviceOption
    @Option(help: "A configuration: its screen, device mapping and [gestures] thresholds (default: the built-in 1920 × 1080 screen).")
    var config: String?
    @Flag(help: "One JSON object per line.") var json = false
    @Option(help: ArgumentHelp("The recognizers to run, comma-separated: drag, pinch, rotate, tap, long_press, swipe, edge_swipe.", valueName: "drag,pinch,rotate,tap"))
    var recognizers: String = "drag,pinch,rotate,tap"
    @Flag(help: "Let only the first continuous gesture to begin run, instead of all at once.") var exclusive = false

    func validate() throws { _ = try kinds() }

    func kinds() throws -> Set<GestureKind> {
        var kinds: Set<GestureKind> = []
        for name in recognizers.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingBlanks()
            guard let kind = GestureKind(rawValue: trimmed) else {
                throw ValidationError("--recognizers takes \(GestureKind.allCases.map(\.rawValue).joined(separator: ", ")) separated by commas; '\(trimmed)' is none of them")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    func run() throws {
        let configuration = try config.map(loadConfiguration) ?? .builtInDefault
        let replay = try loadReplay(recording, device: device, mappedBy: configuration, named: config)
        var gestures = GestureSet(try kinds(), thresholds: configuration.gestures, simultaneity: exclusive ? .exclusive : .simultaneous,
                                  screen: configuration.screen)
        if !json {
            emit(pad("t (s)", 10) + "  " + "gesture".padded(toLength: 11) + "state".padded(toLength: 11) + "touches  value")
        }
        var events: [RecognizedGesture] = []
        for frame in replay.frames() {
            // A finger held still may send no frames: a long press begins at its time, as
            // the daemon wakes it.
            if let deadline = gestures.nextDeadline, deadline < frame.time { gestures.advance(to: deadline, into: &events) }
            gestures.update(frame, into: &events)
            for gesture in events {
                emit(json ? JSONValue.gesture(gesture).encoded : line(gesture))
            }
            events.removeAll(keepingCapacity: true)
        }
    }

    private func line(_ gesture: RecognizedGesture) -> String {
        let value: String
        switch gesture {
        case .drag(let e):
            value = formatted("translation (%.1f, %.1f) px  velocity (%.0f, %.0f) px/s", e.translation.x, e.translation.y, e.translationVelocity.x, e.translationVelocity.y)
        case .pinch(let e):
            value = formatted("scale %.4f  velocity %.3f/s", e.scale, e.scaleVelocity)
        case .rotate(let e):
            value = formatted("rotation %.4f rad (%.1f°)  velocity %.3f rad/s", e.rotation, e.rotation * 180 / .pi, e.rotationVelocity)
        case .tap(let e):
            value = e.state == .recognized ? "count \(e.count) at " + formatted("(%.1f, %.1f)", e.location.x, e.location.y) : ""
        case .longPress(let e):
            value = formatted("held %.3f s at (%.1f, %.1f)", e.duration, e.location.x, e.location.y)
        case .swipe(let e):
            value = e.direction.rawValue + formatted("  distance %.1f px  velocity (%.0f, %.0f) px/s", e.distance, e.velocity.x, e.velocity.y)
        case .edgeSwipe(let e):
            value = "from the " + e.edge.rawValue + formatted(" edge  distance %.1f px  velocity (%.0f, %.0f) px/s", e.distance, e.velocity.x, e.velocity.y)
        }
        return pad(formatted("%.4f", gesture.time), 10) + "  " + gesture.kind.rawValue.padded(toLength: 11)
            + gesture.state.rawValue.padded(toLength: 11) + pad("\(gesture.touches)", 7) + "  " + value
    }

    private func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: Swift.max(0, width - text.count)) + text
    }
}
