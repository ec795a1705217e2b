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
    /// Overrides `[daemon] state`: the file the scene is kept in.
    public var state: String?
    /// Overrides `[daemon] state_interval`.
    public var stateInterval: Double?

    public init() {}

    /// Where motiond looks when not given `--config`.
    public static let defaultConfigFile = "/etc/motiond/motiond.toml"

    /// The configuration file to read: `--config`, else the default path if it exists; nil
    /// for the built-in configuration. One answer for start-up and every reload.
    ///
    /// Always absolute: `stats` reports it, and `motionctl calibrate` writes its drop-in to
    /// `conf.d` beside it from another working directory.
    public var configurationFile: String? {
        guard let file = configFile ?? (FileManager.default.fileExists(atPath: Self.defaultConfigFile) ? Self.defaultConfigFile : nil) else { return nil }
        return Self.absolute(file, in: FileManager.default.currentDirectoryPath)
    }

    /// `path` made absolute against `directory`. `.` parts are dropped, `..` kept: resolving
    /// it by name would disagree with the kernel where a part is a symbolic link.
    public static func absolute(_ path: String, in directory: String) -> String {
        let joined = path.hasPrefix("/") ? path : directory + "/" + path
        return "/" + joined.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }
}
