import MotionCore
import TouchInput

/// Everything a motiond configuration file says, checked: what `motionctl config check`
/// prints and what the daemon builds its scene from.
public struct Configuration: Sendable {
    /// The file it came from, for messages; nil for the built-in default.
    public var file: String?
    /// Every file read, in order: the main file, then its `conf.d/*.toml` drop-ins.
    public var files: [String] = []
    /// The daemon's own settings.
    public var daemon = DaemonSettings()
    /// The screen the scene lives on, in pixels.
    public var screen = Configuration.defaultScreen
    /// The positions and sizes taken from outside (a client's `set` and `add_element`, the
    /// state file), relative to this screen.
    public var valueLimits: ValueLimits { ValueLimits(screen: screen) }
    /// The screen without a `[screen]` table: full HD.
    public static let defaultScreen = Size(width: 1920, height: 1080)
    /// `[screen] idle_after`: seconds without a touch before `screen.idle` turns true.
    public var idleAfter = 60.0
    /// `[screen] prediction`: how far ahead, in seconds, elements moved by fingers are also
    /// published where they will be (`ID.predicted_position`…); 0, the default, for none.
    public var prediction = 0.0
    /// When gestures begin.
    public var gestures = GestureThresholds()
    /// Which touchscreens to use and how each maps to the screen; empty means every
    /// touchscreen, mapped to the whole screen.
    public var devices: [DeviceSettings] = []
    /// What motiond knows of panels whose firmware misdescribes them (``Quirk/builtIn``): the
    /// first that selects a device fills in the keys its `[[device]]` entry leaves out.
    public var quirks: [Quirk] = Quirk.builtIn
    /// `[[calibration]]` tables, in the order read.
    public var calibrations: [CalibrationSettings] = []
    /// The elements, in the order given (later ones are on top when z-orders tie).
    public var elements: [ElementSettings] = []
    /// The virtual touchscreens: those `[[virtual_touchscreen]]` defines, then one for each
    /// output a `[[device]]` names that no table does.
    public var virtualTouchscreens: [VirtualTouchscreenSettings] = []
    /// The HTTP and WebSocket listener for browser pages; nil for none.
    public var websocket: WebSocketSettings?
    /// Where TUIO bundles go; none by default.
    public var tuio: [TUIOSettings] = []
    /// `[[screen_gesture]]`: gestures the whole screen watches for, published on
    /// `screen.gesture` by name.
    public var screenGestures: [ScreenGesturePattern] = []

    /// Creates an empty configuration.
    public init() {}

    /// What motiond runs without a configuration file: one full-screen element, `surface`,
    /// that the fingers drag, turn and pinch, so a new kiosk shows motion out of the box.
    public static var builtInDefault: Configuration {
        var configuration = Configuration()
        let screen = configuration.screen
        configuration.elements = [
            ElementSettings(
                id: "surface", center: Point(x: screen.width / 2, y: screen.height / 2), size: screen,
                interactions: [.directlyManipulable])
        ]
        return configuration
    }

    /// The rectangle of the screen a device covers: its entry's `output`, else the whole screen.
    public func outputRect(for settings: DeviceSettings?) -> Rect {
        settings?.output ?? Rect(origin: Point(x: 0, y: 0), size: screen)
    }
}

/// The `[daemon]` table.
public struct DaemonSettings: Sendable, Hashable {
    /// Where the socket is.
    public var socket = "/run/motiond/motiond.sock"
    /// Frames per second while something moves.
    public var frameRate = 120.0
    /// The group that owns the socket (anyone in it can connect and read), or nil for the
    /// daemon's own group.
    public var socketGroup: String?
    /// Groups whose members may also change things (`set`, `add_element`…), besides root and
    /// the daemon's user.
    public var controlGroups: [String] = []
    /// The file the scene is kept in across restarts (docs/operations.md, The scene across
    /// restarts); nil keeps nothing. `--state` overrides it.
    public var state: String?
    /// The longest a change waits before it is written to ``state``, in seconds: what a
    /// crash may lose at most.
    public var stateInterval = 5.0
    /// The intervals `state_interval` may be: a write a tenth of a second apart at the
    /// most, an hour at the least.
    public static let stateIntervals: ClosedRange<Double> = 0.1...3600

    public init() {}
}

/// One `[[calibration]]` table: a calibration matrix for the devices it names, whatever
/// `[[device]]` entry maps them.
public struct CalibrationSettings: Sendable, Hashable {
    public var selection: DeviceSelection
    /// `[a, b, c, d, e, f]`, as `LIBINPUT_CALIBRATION_MATRIX`.
    public var matrix: [Double]

    public init(selection: DeviceSelection, matrix: [Double]) {
        self.selection = selection
        self.matrix = matrix
    }
}

/// One `[[device]]` table: which devices, and how they map to the screen.
public struct DeviceSettings: Sendable, Hashable {
    /// Which devices this entry is for; no rules means every device.
    public var selection = DeviceSelection()
    /// The rectangle of the screen the device covers, in pixels (`output = [x, y, width,
    /// height]`, or `[width, height]` at the top-left corner); nil for the whole screen.
    public var output: Rect?
    public var rotation = Rotation.none
    public var flipHorizontal = false
    public var flipVertical = false
    /// A calibration matrix; nil to use udev's `LIBINPUT_CALIBRATION_MATRIX` if set.
    public var calibration: [Double]?
    /// Whether motiond takes the device for itself (libevdev's grab), so that the compositor
    /// and the browser do not also act on its touches. Off by default: grabbing also takes the
    /// touchscreen from everything else, ordinary buttons included.
    public var grab = false
    /// The output whose virtual touchscreen shows the apps this device's touches
    /// (``VirtualTouchscreenSettings``); motiond then grabs the device, once that virtual
    /// touchscreen exists. Nil: the apps read the device itself.
    public var virtualTouchscreen: String?
    /// The contact filters (`stuck_after`, `palm_size_mm`, `palm_size`, `jump_mm`,
    /// `hysteresis`) and what they measure in (`resolution`, `size_mm`, `touch_resolution`);
    /// their stuck slop is the configuration's tap slop.
    public var filters = ContactFilterSettings()
    /// The keys among ``quirkKeys`` the entry sets itself: a quirk leaves those alone.
    public var explicit: Set<String> = []
    /// The quirk that applied to the device (``Quirk/name``), if any.
    public var quirk: String?

    /// The keys a quirk may set, under the names `[[device]]` gives them.
    public static let quirkKeys = ["resolution", "size_mm", "touch_resolution", "palm_size_mm", "palm_size", "jump_mm", "hysteresis", "stuck_after",
                                   "phantom_taps", "wake_bursts", "storm_contacts", "storm_quiet", "infrared"]

    public init() {}
}

/// One `[[element]]` table.
public struct ElementSettings: Sendable, Hashable {
    /// The longest id, in bytes (UTF-8): far longer than a name needs, short enough for
    /// every stream name and log line it goes into, and for the state file
    /// (``SceneLimits/maximumIDBytes``).
    public static let maximumIDBytes = SceneLimits.maximumIDBytes
    public var id: String
    public var center: Point
    public var size: Size
    public var rotation = 0.0
    public var scale = 1.0
    public var z = 0
    public var interactions: [InteractionSettings] = []
    /// `reset_after`: idle seconds before the element springs back to its configured
    /// center, rotation and scale; nil to stay where it was left.
    public var resetAfter: Double?
    /// `claim_touches`: whether a touch that begins on the element is kept from the apps
    /// that read a virtual touchscreen, so that dragging a card does not also scroll the page
    /// under it. On by default: an element motiond drives is the app's own drawing of it.
    public var claimsTouches = true

    public init(id: String, center: Point, size: Size, rotation: Double = 0, scale: Double = 1, z: Int = 0, interactions: [InteractionSettings] = []) {
        self.id = id
        self.center = center
        self.size = size
        self.rotation = rotation
        self.scale = scale
        self.z = z
        self.interactions = interactions
    }
}

/// Where a spring pulls: a fixed point, or another element's position.
public enum DestinationSettings: Sendable, Hashable {
    case point(Point)
    case element(String)
}

/// An interaction and its parameters, as configured.
public enum InteractionSettings: Sendable, Hashable {
    case draggable(bounds: Rect?, maxLength: Double, spring: SpringConfiguration)
    case tossable(destination: DestinationSettings?, snapPoints: [String: Point], spring: SpringConfiguration)
    case attach(destination: DestinationSettings, spring: SpringConfiguration)
    case rotatable
    case scalable(minimum: Double?, maximum: Double?, spring: SpringConfiguration)
    case directlyManipulable
    case setPositionOnTap(target: TapTarget)
    case changeDirection(minimumVelocity: Double, axis: ChangeDirection.Axis)

    /// What a tap moves: the element at once, or the destination of its attach or tossable.
    public enum TapTarget: String, Sendable, Hashable {
        case position, attach, tossable
    }

    /// The name used in the configuration file.
    public var name: String {
        switch self {
        case .draggable: return "draggable"
        case .tossable: return "tossable"
        case .attach: return "attach"
        case .rotatable: return "rotatable"
        case .scalable: return "scalable"
        case .directlyManipulable: return "directly_manipulable"
        case .setPositionOnTap: return "set_position_on_tap"
        case .changeDirection: return "change_direction"
        }
    }
}

/// Why a configuration was refused: the file, the line, and what is wrong.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public var file: String
    /// The line, from 1; 0 when the problem is not on one line.
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
