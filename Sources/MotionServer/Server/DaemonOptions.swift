import FoundationEssentials
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

    public init() {}

    /// Where motiond looks when not given `--config`.
    public static let defaultConfigFile = "/etc/motiond/motiond.toml"

    /// The configuration file to read: `--config`, else the default path if it exists; nil
    /// for the built-in configuration. One answer for start-up and every reload.
    public var configurationFile: String? {
        configFile ?? (FileManager.default.fileExists(atPath: Self.defaultConfigFile) ? Self.defaultConfigFile : nil)
    }
}
