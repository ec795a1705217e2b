import Foundation
import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionDaemon

/// The `calibrate`, `calibration` and `reload` ops on a daemon without sockets: who may
/// calibrate, where the touches go while it lasts, and what every client hears.
@Suite("Calibration over the protocol")
struct CalibrationProtocolTests {
    /// An 800 × 480-unit panel mapped onto the example's 1920 × 1080 screen, read from `node`
    /// and numbered `number`: its identity.
    @discardableResult
    static func addPanel(to daemon: Daemon, node: String = "/dev/input/event7", number: Int = 0) -> DeviceIdentity {
        addTestPanel(to: daemon, node: node, number: number)
    }

    static func touch(_ id: Int32, _ phase: TouchPhase, deviceX: Int32, deviceY: Int32) -> TouchContact {
        panelTouch(id, phase, deviceX: deviceX, deviceY: deviceY)
    }

    @Test("while a client calibrates, the device's new touches come to it as raw positions and move nothing; every client hears the target, and its end when the client goes")
    func capture() throws {
        let (daemon, clock) = try makeDaemon()
        Self.addPanel(to: daemon)
        let calibrator = RecordingOutput(), watcher = RecordingOutput()
        let session = daemon.connect(calibrator, credentials: nil)
        let other = daemon.connect(watcher, credentials: nil)
        _ = try calibrator.take(); _ = try watcher.take()
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["card.position"]}"#, from: other)
        _ = try watcher.take()

        daemon.receive(#"{"id": 2, "op": "calibrate", "device": "/dev/input/event7", "target": {"x": 240, "y": 135}, "step": 1, "steps": 6}"#, from: session)
        let reply = try #require(try calibrator.take().first { $0["id"]?.integer == 2 })
        #expect(reply["ok"]?.bool == true && reply["result"]?["calibration"]?["target"]?["x"]?.number == 240)
        let heard = try #require(try watcher.take().first { $0["event"]?.string == "calibration" })
        #expect(heard["calibration"]?["step"]?.integer == 1 && heard["calibration"]?["device"]?.string == "/dev/input/event7")
        #expect(heard["calibration"]?["output"]?["width"]?.number == 1920)
        daemon.receive(#"{"id": 3, "op": "calibration"}"#, from: other)
        #expect(try watcher.take().first?["result"]?["calibration"]?["target"]?["y"]?.number == 135)

        // A touch on the card (at 866, 830 in the example): held at (360, 369) units, lifted.
        for (index, phase) in [TouchPhase.began, .moved, .ended].enumerated() {
            clock.now = 100 + Double(index) * 0.01
            daemon.process(TouchFrame(time: clock.now, contacts: [Self.touch(5, phase, deviceX: 360 + Int32(index), deviceY: 369)]), from: DeviceIdentity(number: 0, node: "/dev/input/event7"))
        }
        let touches = try calibrator.take().filter { $0["event"]?.string == "calibration_touch" }
        #expect(touches.count == 1)
        let raw = try #require(touches.first?["raw"])
        #expect(Swift.abs((raw["x"]?.number ?? 0) - 361.0 / 800) < 1e-12 && Swift.abs((raw["y"]?.number ?? 0) - 369.0 / 480) < 1e-12)
        #expect(try watcher.take().allSatisfy { $0["stream"]?.string != "card.position" }, "the card did not move")
        // Another device's touches still reach the scene.
        for (index, phase) in [TouchPhase.began, .moved].enumerated() {
            daemon.process(TouchFrame(time: 101 + Double(index) * 0.02, contacts: [Self.touch(1, phase, deviceX: 360 + Int32(index) * 40, deviceY: 369)]), from: DeviceIdentity(number: 1, node: "/dev/input/event8"))
        }
        #expect(try watcher.take().contains { $0["stream"]?.string == "card.position" })

        daemon.disconnect(session)
        let ended = try #require(try watcher.take().first { $0["event"]?.string == "calibration" })
        #expect(ended["calibration"] == .null)
    }

    @Test("calibrate needs control, a device motiond reads, a target on the screen, and one calibration at a time")
    func refusals() throws {
        let (daemon, _) = try makeDaemon(control: false)
        Self.addPanel(to: daemon)
        let output = RecordingOutput()
        let reader = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(#"{"id": 1, "op": "calibrate", "device": "/dev/input/event7"}"#, from: reader)
        #expect(try output.take().first?["error"]?["code"]?.string == "forbidden")
        daemon.receive(#"{"id": 2, "op": "reload"}"#, from: reader)
        #expect(try output.take().first?["error"]?["code"]?.string == "forbidden")

        let (controlled, _) = try makeDaemon()
        Self.addPanel(to: controlled)
        let first = RecordingOutput(), second = RecordingOutput()
        let one = controlled.connect(first, credentials: nil), two = controlled.connect(second, credentials: nil)
        for (line, code) in [
            (#"{"id": 1, "op": "calibrate", "device": "/dev/input/event9"}"#, "unknown_device"),
            (#"{"id": 2, "op": "calibrate", "device": "/dev/input/event7", "target": {"x": 5000, "y": 10}}"#, "bad_value"),
            (#"{"id": 3, "op": "calibrate", "device": "/dev/input/event7", "target": [1, 2]}"#, "bad_request"),
            (#"{"id": 4, "op": "calibrate", "device": "/dev/input/event7", "message": "\#(String(repeating: "x", count: 201))"}"#, "bad_request"),
            (#"{"id": 5, "op": "calibrate"}"#, "bad_request"),
        ] {
            _ = try first.take()
            controlled.receive(Substring(line), from: one)
            #expect(try first.take().first { $0["id"] != nil }?["error"]?["code"]?.string == code, "\(line)")
        }
        controlled.receive(#"{"id": 6, "op": "calibrate", "device": "/dev/input/event7"}"#, from: one)
        _ = try second.take()
        controlled.receive(#"{"id": 7, "op": "calibrate", "device": "/dev/input/event7"}"#, from: two)
        #expect(try second.take().first { $0["id"] != nil }?["error"]?["code"]?.string == "busy")
        // Without a way to read files, reload says so instead of pretending.
        controlled.receive(#"{"id": 8, "op": "reload"}"#, from: one)
        #expect(try first.take().first { $0["id"]?.integer == 8 }?["error"]?["code"]?.string == "reload_failed")
        controlled.reloadConfiguration = { "kiosk.toml:3: no" }
        controlled.receive(#"{"id": 9, "op": "reload"}"#, from: one)
        #expect(try first.take().first { $0["id"]?.integer == 9 }?["error"]?["message"]?.string == "kiosk.toml:3: no")
    }

    @Test("a touch already down when the calibration starts stays the scene's; one begun during it stays the calibration's after it ends")
    func ownership() throws {
        let (daemon, _) = try makeDaemon()
        Self.addPanel(to: daemon)
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let node = "/dev/input/event7"
        daemon.process(TouchFrame(time: 100, contacts: [Self.touch(1, .began, deviceX: 360, deviceY: 369)]), from: DeviceIdentity(number: 0, node: node))
        daemon.receive(#"{"id": 1, "op": "calibrate", "device": "/dev/input/event7"}"#, from: session)
        var frame = TouchFrame(time: 100.01, contacts: [Self.touch(1, .moved, deviceX: 400, deviceY: 369), Self.touch(2, .began, deviceX: 10, deviceY: 10)])
        daemon.touchscreens.takeCalibrationTouches(&frame, node: node)
        #expect(frame.contacts.map(\.trackingID) == [1])
        daemon.receive(#"{"id": 2, "op": "calibrate", "device": "/dev/input/event7", "end": true}"#, from: session)
        #expect(daemon.calibration?.isEnding == true, "touch 2 is still down")
        frame = TouchFrame(time: 100.02, contacts: [Self.touch(2, .ended, deviceX: 10, deviceY: 10), Self.touch(3, .began, deviceX: 20, deviceY: 20)])
        daemon.touchscreens.takeCalibrationTouches(&frame, node: node)
        #expect(frame.contacts.map(\.trackingID) == [3])
        #expect(daemon.calibration == nil)
        #expect(try output.take().filter { $0["event"]?.string == "calibration_touch" }.isEmpty, "a touch that lifts after the end is no target's")
    }

    /// A client that follows `screen.contacts` and the card; its first lines taken.
    static func watch(_ daemon: Daemon) throws -> RecordingOutput {
        let watcher = RecordingOutput()
        let session = daemon.connect(watcher, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["screen.contacts", "card.*"]}"#, from: session)
        #expect(try watcher.take().contains { $0["id"]?.integer == 1 && $0["ok"]?.bool == true })
        return watcher
    }

    /// Touch `id` of `node` held on the card (at 866, 830 in the example), moving, then lifted.
    static func rest(of id: Int32, on node: String, device: Int, from time: Double, _ daemon: Daemon, _ clock: ManualFrameClock) {
        for (index, phase) in [TouchPhase.moved, .moved, .ended].enumerated() {
            clock.now = time + Double(index) * 0.02
            daemon.process(TouchFrame(time: clock.now, contacts: [Self.touch(id, phase, deviceX: 380 + Int32(index) * 30, deviceY: 369)]), from: DeviceIdentity(number: device, node: node))
        }
    }

    @Test("a touch begun in a calibration whose client went stays the calibration's when another client starts one before it lifts")
    func touchOutlivesItsCalibrationsClient() throws {
        let (daemon, clock) = try makeDaemon()
        Self.addPanel(to: daemon)
        let node = "/dev/input/event7"
        let first = RecordingOutput(), second = RecordingOutput()
        let one = daemon.connect(first, credentials: nil), two = daemon.connect(second, credentials: nil)
        let watcher = try Self.watch(daemon)
        daemon.receive(#"{"id": 1, "op": "calibrate", "device": "/dev/input/event7"}"#, from: one)
        clock.now = 100
        daemon.process(TouchFrame(time: 100, contacts: [Self.touch(5, .began, deviceX: 360, deviceY: 369)]), from: DeviceIdentity(number: 0, node: node))
        daemon.disconnect(one)
        daemon.receive(#"{"id": 2, "op": "calibrate", "device": "/dev/input/event7"}"#, from: two)
        #expect(try second.take().contains { $0["id"]?.integer == 2 && $0["ok"]?.bool == true })

        Self.rest(of: 5, on: node, device: 0, from: 100.1, daemon, clock)
        let leaked = try watcher.take().filter { $0["stream"]?.string == ScreenContacts.name || $0["stream"]?.string?.hasPrefix("card.") == true }
        #expect(leaked.isEmpty, "the rest of touch 5 reached the scene: \(leaked)")
        // The second calibration takes its own touches, and only those.
        for (index, phase) in [TouchPhase.began, .ended].enumerated() {
            clock.now = 101 + Double(index) * 0.02
            daemon.process(TouchFrame(time: clock.now, contacts: [Self.touch(6, phase, deviceX: 100, deviceY: 100)]), from: DeviceIdentity(number: 0, node: node))
        }
        let touches = try second.take().filter { $0["event"]?.string == "calibration_touch" }
        #expect(touches.count == 1 && Swift.abs((touches.first?["raw"]?["x"]?.number ?? 0) - 100.0 / 800) < 1e-12, "\(touches)")
        #expect(try watcher.take().allSatisfy { $0["stream"]?.string != ScreenContacts.name })
    }

    @Test("a touch begun in a calibration stays the calibration's when its client switches to another device before it lifts")
    func touchOutlivesASwitchOfDevice() throws {
        let (daemon, clock) = try makeDaemon()
        Self.addPanel(to: daemon)
        Self.addPanel(to: daemon, node: "/dev/input/event8", number: 1)
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let watcher = try Self.watch(daemon)
        daemon.receive(#"{"id": 1, "op": "calibrate", "device": "/dev/input/event7"}"#, from: session)
        clock.now = 100
        daemon.process(TouchFrame(time: 100, contacts: [Self.touch(5, .began, deviceX: 360, deviceY: 369)]), from: DeviceIdentity(number: 0, node: "/dev/input/event7"))
        daemon.receive(#"{"id": 2, "op": "calibrate", "device": "/dev/input/event8"}"#, from: session)
        #expect(try output.take().contains { $0["id"]?.integer == 2 && $0["ok"]?.bool == true })

        Self.rest(of: 5, on: "/dev/input/event7", device: 0, from: 100.1, daemon, clock)
        let leaked = try watcher.take().filter { $0["stream"]?.string == ScreenContacts.name || $0["stream"]?.string?.hasPrefix("card.") == true }
        #expect(leaked.isEmpty, "the rest of touch 5 reached the scene: \(leaked)")
        #expect(try output.take().allSatisfy { $0["event"]?.string != "calibration_touch" }, "touch 5 lifted after its calibration ended")
        // The first device's next touch is the scene's again.
        clock.now = 101
        daemon.process(TouchFrame(time: 101, contacts: [Self.touch(7, .began, deviceX: 360, deviceY: 369)]), from: DeviceIdentity(number: 0, node: "/dev/input/event7"))
        #expect(try watcher.take().contains { $0["stream"]?.string == ScreenContacts.name })
    }
}
