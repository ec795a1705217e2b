import MotionCore
import TouchInput
import MotionWire

/// A touchscreen being calibrated (the `calibrate` op): its touches that begin from now go to
/// the calibrating client as raw positions, not to the scene, so that touching the targets
/// moves nothing on the kiosk.
///
/// | state     | event                                  | next      |
/// |-----------|----------------------------------------|-----------|
/// | —         | `calibrate` from a client with control  | `active`  |
/// | `active`  | `calibrate` with a new target           | `active`  |
/// | `active`  | `calibrate` with `end`, the client goes | `ending` (or — when no touch of it is down) |
/// | `active`, `ending` | another calibration starts (another client's, or its client's of another device) | `ending` beside it (or — when no touch of it is down) |
/// | `active`, `ending` | the device goes                | —         |
/// | `ending`  | its last touch lifts                    | —         |
///
/// Contacts already down when it starts stay the scene's until they lift; contacts that began
/// while it was active stay the calibration's until they lift, even after it ends and another
/// starts (``TouchscreenState``).
struct CalibrationCapture {
    /// What the calibration page shows: the `calibration` events' value.
    struct Display: Equatable {
        var device: String
        /// The device's output rectangle, in screen pixels.
        var output: Rect
        /// Where the target is, in screen pixels; nil between targets.
        var target: Point?
        var step: Int
        var steps: Int
        var message: String

        /// What `calibrate` asked the page to show, on the device's `output`.
        init(_ request: CalibrationRequest, output: Rect) {
            device = request.device
            self.output = output
            target = request.target
            step = request.step
            steps = request.steps
            message = request.message
        }

        var json: JSONValue {
            .object([
                ("device", .string(device)), ("output", .rect(output)),
                ("target", target.map { .point($0) } ?? .null),
                ("step", .integer(Int64(step))), ("steps", .integer(Int64(steps))), ("message", .string(message)),
            ])
        }
    }

    /// A touch of the device, from landing to lift: where it was on average.
    struct Touch {
        /// In libinput's normalised units, 0…1 of the axes' ranges, before any calibration.
        var raw: Point
        /// In screen pixels, as the device is mapped now.
        var position: Point
        /// When it lifted.
        var time: Double

        func json(device: String) -> JSONValue {
            .object([("event", "calibration_touch"), ("device", .string(device)), ("raw", .point(raw)),
                     ("position", .point(position)), ("t", .number(time))])
        }
    }

    /// The client calibrating.
    let sessionID: Int
    var display: Display
    /// Whether the client is done (or gone) and only its touches still down are waited for.
    private(set) var isEnding = false

    /// Device units to normalised units, for the device being calibrated.
    private let normaliser: CoordinateMapper
    /// Sums of each owned contact's positions, by tracking id.
    private var owned: [Int32: (raw: Point, position: Point, samples: Int)] = [:]

    init(sessionID: Int, display: Display, description: DeviceDescription) {
        self.sessionID = sessionID
        self.display = display
        let axes = description.positionAxes!
        normaliser = CoordinateMapper(xAxis: axes.x, yAxis: axes.y)
    }

    /// Stops taking new touches; true when nothing of the device is held any more.
    mutating func end() -> Bool {
        isEnding = true
        return owned.isEmpty
    }

    /// Whether it is over: ending, and no touch of its own down.
    var isOver: Bool { isEnding && owned.isEmpty }

    /// Splits a frame of the device: the contacts the scene keeps stay in `frame` (empty when
    /// none does); the touches that lifted are returned.
    mutating func take(_ frame: inout TouchFrame) -> [Touch] {
        var lifted: [Touch] = []
        var kept: [TouchContact] = []
        for contact in frame.contacts {
            let mine = owned[contact.trackingID] != nil || (contact.phase == .began && !isEnding)
            guard mine else {
                kept.append(contact)
                continue
            }
            let (u, v) = normaliser.normalised(x: contact.deviceX, y: contact.deviceY)
            var sums = owned[contact.trackingID] ?? (Point(x: 0, y: 0), Point(x: 0, y: 0), 0)
            sums.raw = Point(x: sums.raw.x + u, y: sums.raw.y + v)
            sums.position = Point(x: sums.position.x + contact.position.x, y: sums.position.y + contact.position.y)
            sums.samples += 1
            switch contact.phase {
            case .began, .moved, .stationary:
                owned[contact.trackingID] = sums
            case .ended:
                owned[contact.trackingID] = nil
                let n = Double(sums.samples)
                if !isEnding {
                    lifted.append(Touch(raw: Point(x: sums.raw.x / n, y: sums.raw.y / n),
                                        position: Point(x: sums.position.x / n, y: sums.position.y / n), time: frame.time))
                }
            case .cancelled:
                // A palm, a stuck or jumping contact: not a touch of a target.
                owned[contact.trackingID] = nil
            }
        }
        if kept.count != frame.contacts.count { frame.contacts = kept }
        return lifted
    }
}
