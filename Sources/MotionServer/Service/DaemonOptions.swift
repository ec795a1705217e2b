import MotionConfiguration

/// How motiond was asked to run.
public struct DaemonOptions: Sendable {
    /// The configuration file; nil means the default path if it exists, else the built-in.
    public var configFile: String?
    /// Overrides `[daemon] socket`.
    public var socket: String?
    /// A recording to replay as the touchscreen.
    public var replay: String?
    /// Which device of a libinput recording to replay (nil: the first touchscreen).
    public var replayDevice: Int?
    public var loop = false
    public var speed = 1.0
    /// Overrides `[websocket] listen`, turning the listener on ("127.0.0.1:8765").
    public var websocket: ListenAddress?
    /// Overrides `[daemon] state`: the file the scene is kept in.
    public var state: String?
    /// Overrides `[daemon] state_interval`.
    public var stateInterval: Double?

    public init() {}

    /// The configuration file to read (``Configuration/fileToRead(given:)``): `--config`, else
    /// the default path if it exists; nil for the built-in configuration.
    public var configurationFile: String? { Configuration.fileToRead(given: configFile) }
}
