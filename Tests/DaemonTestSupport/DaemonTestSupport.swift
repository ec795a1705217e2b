import Foundation
import MotionConfiguration
import MotionCore
import MotionDaemon
import MotionWire
import Testing
import TouchInput

// What the daemon's tests and the server's share: a client output that keeps what it is
// sent, a daemon on a hand-driven clock, a scheduler driven by hand, and a state writer that
// writes at once.

/// A client output that keeps what the daemon sends, as parsed JSON lines.
package final class RecordingOutput: ClientOutput {
    package var lines: [String] = []
    package var closed = false
    package var coalesced = 0
    /// Whether it takes a frame's lines in one buffer (a socket with room) or one by one.
    package var isKeepingUp = true
    /// How many buffers were sent, each holding one or more lines.
    package var writes = 0

    package init() {}

    package func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) {
        writes += 1
        // Each line with its newline; a tail without one is kept as it is, to be caught.
        var text = Substring(String(decoding: line, as: UTF8.self))
        while let end = text.firstIndex(of: "\n") {
            lines.append(String(text[...end]))
            text = text[text.index(after: end)...]
        }
        if !text.isEmpty { lines.append(String(text)) }
    }

    package func flush() {}

    package func close(saying line: ArraySlice<UInt8>?) {
        if let line { lines.append(String(decoding: line, as: UTF8.self)) }
        closed = true
    }

    /// Everything received since the last call.
    package func take() throws -> [JSONInput] {
        defer { lines = [] }
        return try lines.map { try JSONInput(parsing: Substring($0.hasSuffix("\n") ? String($0.dropLast()) : $0)) }
    }
}

/// The touchscreen of tests that feed the daemon frames without adding a device: number 0,
/// read from no node.
package let testPanel = DeviceIdentity(number: 0, node: "")

/// The repository's example configuration, `config/motiond.toml`.
package let exampleConfigurationFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("config/motiond.toml").path

/// A daemon on a hand-driven clock, with the example scene.
package func makeDaemon(control: Bool = true) throws -> (Daemon, ManualFrameClock) {
    let clock = ManualFrameClock(now: 100)
    return (Daemon(configuration: try Configuration.load(file: exampleConfigurationFile), clock: clock, controlPolicy: { _ in control }), clock)
}

/// A scheduler driven by hand, for the daemon's timer.
package final class HandScheduler: FrameScheduler {
    package var now: Double
    private var pending: [(id: Int, at: Double, work: () -> Void)] = []
    private var nextID = 0

    package init(now: Double) { self.now = now }

    package func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void {
        let id = nextID
        nextID += 1
        pending.append((id, deadline, work))
        return { [weak self] in self?.pending.removeAll { $0.id == id } }
    }

    /// Runs what is due by `time`, in order. A task that keeps scheduling another at
    /// once would loop for ever: after 10,000 tasks it is recorded as an issue instead.
    package func advance(to time: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        var ran = 0
        while let next = pending.min(by: { $0.at < $1.at }), next.at <= time {
            guard ran < 10_000 else {
                Issue.record("10,000 tasks ran on the way to \(time): something schedules itself again at once", sourceLocation: sourceLocation)
                break
            }
            ran += 1
            pending.removeAll { $0.id == next.id }
            now = next.at
            next.work()
        }
        now = time
    }
}

/// Writes at once, on the caller's thread: the daemon's own writer reports on its event
/// loop, and in these tests the loop is the test.
package final class ImmediateStateWriter: StateWriter {
    private var file: KeptFile?

    package init() {}

    package func keep(_ file: KeptFile) {
        self.file = file
    }

    package func write(_ state: SceneState, checkedAgainst limits: ValueLimits, done: @escaping (Result<StateWritten?, StateFileError>) -> Void) {
        done(writeAndWait(state, checkedAgainst: limits))
    }

    package func writeAndWait(_ state: SceneState, checkedAgainst limits: ValueLimits) -> Result<StateWritten?, StateFileError> {
        guard var file else { return .success(nil) }
        defer { self.file = file }
        return file.write(state, checkedAgainst: limits)
    }
}

/// A finger at screen position (`x`, `y`), its device units the same numbers, in slot `id`.
package func fingerContact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
    TouchContact(slot: Int(id), trackingID: id, phase: phase, deviceX: Int32(x), deviceY: Int32(y), position: Point(x: x, y: y))
}

/// Adds a 800×480-unit touchscreen mapped to the whole 1920×1080 screen, as the input
/// thread would, with no filters.
@discardableResult
package func addTestPanel(to daemon: Daemon, node: String = "/dev/input/event7", number: Int = 0) -> DeviceIdentity {
    var panel = DeviceDescription(name: "Panel")
    panel.properties = [InputProperty.direct]
    panel.codes[EventType.absolute] = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
    panel.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
    panel.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
    panel.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: 799)
    panel.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: 479)
    let mapping = OutputMapping(outputSize: Size(width: 1920, height: 1080))
    let device = DeviceIdentity(number: number, node: node, description: panel)
    daemon.input(.added(device, panel, DeviceSetup(
        output: Rect(x: 0, y: 0, width: 1920, height: 1080),
        filters: ResolvedContactFilters(.off, xAxis: panel.axes[AbsoluteAxis.positionX]!, yAxis: panel.axes[AbsoluteAxis.positionY]!, touchMajor: nil),
        mapping: mapping)))
    return device
}

/// A finger on the panel ``addTestPanel(to:node:number:)`` adds, at device units
/// (`deviceX`, `deviceY`), with the screen position its mapping gives.
package func panelTouch(_ id: Int32, _ phase: TouchPhase, deviceX: Int32, deviceY: Int32) -> TouchContact {
    TouchContact(slot: 0, trackingID: id, phase: phase, deviceX: deviceX, deviceY: deviceY,
                 position: Point(x: Double(deviceX) * 2.4, y: Double(deviceY) * 2.25))
}
