import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// The touchscreens the daemon reads and skips (``DeviceRegistry``), and the one being
/// calibrated: what `motionctl calibrate` drives the calibration page through
/// (docs/protocol.md, Calibration). Every client hears a calibration change.
final class TouchscreenState {
    var devices = DeviceRegistry()
    /// The touchscreen being calibrated, while a client calibrates one (`calibrate`).
    var calibration: CalibrationCapture?
    /// Calibrations another one replaced (a client that calibrates after the first went, one
    /// that switches devices) while touches begun in them were still down: they keep those
    /// touches from the scene until they lift, as the calibration they began in would have.
    private var replaced: [CalibrationCapture] = []
    private unowned let clients: ClientHub

    init(clients: ClientHub) {
        self.clients = clients
    }

    /// Starts or updates the calibration of `request.device` for `session`, or ends it.
    func calibrate(_ request: CalibrationRequest, for session: ClientSession, configuration: Configuration) throws(ProtocolError) -> JSONValue {
        if let calibration, calibration.sessionID != session.id, !calibration.isEnding {
            throw ProtocolError(.busy, "client \(calibration.sessionID) is calibrating \(calibration.display.device); one calibration at a time")
        }
        if request.end {
            if calibration?.sessionID == session.id { endCalibration() }
            return .object([("calibration", .null)])
        }
        guard let device = devices.device(request.device) else {
            throw ProtocolError(.unknownDevice, "no touchscreen is read from '\(request.device)'; `devices` lists them")
        }
        if let target = request.target {
            let screen = configuration.screen
            guard target.x.isFinite, target.y.isFinite, (0...screen.width).contains(target.x), (0...screen.height).contains(target.y) else {
                throw ProtocolError(.badValue, "target must lie on the \(compactNumber(screen.width))×\(compactNumber(screen.height)) screen, not (\(compactNumber(target.x)), \(compactNumber(target.y)))")
            }
        }
        let output = device.setup.output
        let display = CalibrationCapture.Display(request, output: output)
        if var current = calibration, current.sessionID == session.id, !current.isEnding, current.display.device == request.device {
            current.display = display
            calibration = current
        } else {
            if var previous = calibration, !previous.end() { replaced.append(previous) }
            calibration = CalibrationCapture(sessionID: session.id, display: display, description: device.description)
        }
        calibrationChanged()
        return .object([("calibration", display.json)])
    }

    /// What the calibration page should show now.
    var calibrationJSON: JSONValue {
        guard let calibration, !calibration.isEnding else { return .null }
        return calibration.display.json
    }

    /// The calibrating client is done or gone: the page hears so; the capture lasts until its
    /// touches lift.
    func endCalibration() {
        guard var capture = calibration, !capture.isEnding else { return }
        calibration = capture.end() ? nil : capture
        calibrationChanged()
    }

    /// The touchscreen read from `node` went: its touches went with it, and so does its
    /// calibration, if any.
    func deviceRemoved(node: String) {
        replaced.removeAll { $0.display.device == node }
        guard calibration?.display.device == node else { return }
        calibration = nil
        calibrationChanged()
    }

    /// Every client hears what the calibration page should show.
    func calibrationChanged() {
        clients.broadcast(ProtocolLine.calibration(calibrationJSON))
    }

    /// Whether some calibration takes touches of the device read from `node`.
    func capturesTouches(of node: String) -> Bool {
        calibration?.display.device == node || replaced.contains { $0.display.device == node }
    }

    /// Takes the calibrations' touches out of a frame of the device read from `node`, and
    /// tells the calibrating client of each that lifted.
    func takeCalibrationTouches(_ frame: inout TouchFrame, node: String) {
        for index in replaced.indices where replaced[index].display.device == node {
            _ = replaced[index].take(&frame)  // Ended: what lifts is no target's.
        }
        replaced.removeAll { $0.isOver }
        guard var capture = calibration, capture.display.device == node else { return }
        let touches = capture.take(&frame)
        calibration = capture.isOver ? nil : capture
        guard !touches.isEmpty, let session = clients.sessions[capture.sessionID] else { return }
        for touch in touches { clients.send(touch.json(device: capture.display.device), to: session) }
        session.output.flush()
    }
}
