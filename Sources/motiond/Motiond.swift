import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import MotionControl
import MotionServer
import MotionWire

/// The daemon's command line. Everything it does is in MotionServer's `DaemonService`.
@main
struct Motiond: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motiond",
        abstract: "Touch input daemon: reads touchscreens, recognizes gestures, runs springs and publishes the motion to UI processes.",
        discussion: """
            Publishes the scene over a Unix-domain socket as JSON lines (docs/protocol.md), \
            and with [websocket] or --websocket to browser pages over a WebSocket. \
            Without --config it reads /etc/motiond/motiond.toml, or without that file runs a \
            built-in scene: one full-screen element, 'surface', that the fingers drag, turn \
            and pinch. With --replay it plays a recording as the touchscreen, for machines \
            that have none. SIGHUP reloads the configuration; SIGTERM stops.
            """,
        version: MotiondVersion.string
    )

    /// Ignores SIGXFSZ and blocks the signals before anything else, so that none is lost or handled
    /// asynchronously (see `DaemonSignal.blockInThisThread`), then parses and runs; or, called
    /// as `motionctl` (the installed motionctl is a link to this binary), runs motionctl.
    static func main() {
        if let name = CommandLine.arguments.first?.split(separator: "/").last, name == "motionctl" {
            motionctlMain()
            return
        }
        // A file-size limit (`ulimit -f`, systemd's LimitFSIZE) reached by a write of the
        // state file must fail that write with EFBIG, which the daemon reports in /healthz
        // and tries again, not end the process: SIGXFSZ's default action kills it. The
        // final write at SIGTERM runs on the event loop's thread, where nothing blocks it.
        signal(SIGXFSZ, SIG_IGN)
        DaemonSignal.blockInThisThread()
        main(nil)
    }

    @Option(help: "The configuration file (default /etc/motiond/motiond.toml).") var config: String?
    @Option(help: "The socket path, instead of the configuration's.") var socket: String?
    @Option(help: ArgumentHelp("Serve the live page, /motiond.js and the WebSocket here, instead of [websocket] listen (port 0: any free port).",
                               valueName: "host:port")) var websocket: String?
    @Option(help: ArgumentHelp("Play this recording (evemu, or libinput record YAML) as the touchscreen.", valueName: "file")) var replay: String?
    @Option(help: ArgumentHelp("With --replay of a libinput recording holding several devices: the one to play, from 0 (default: the first touchscreen).", valueName: "n"))
    var replayDevice: Int?
    @Option(help: ArgumentHelp("Keep the scene in this file across restarts, instead of [daemon] state.", valueName: "file")) var state: String?
    @Option(help: ArgumentHelp("Write the scene at most this often, instead of [daemon] state_interval.", valueName: "seconds")) var stateInterval: Double?
    @Flag(name: .customLong("loop"), help: "With --replay: play it again and again.") var loops = false
    @Option(help: "With --replay: play this many times faster.") var speed: Double = 1

    func validate() throws {
        if replay == nil && (loops || speed != 1 || replayDevice != nil) { throw ValidationError("--loop, --speed and --replay-device go with --replay") }
        if let replayDevice, replayDevice < 0 { throw ValidationError("--replay-device counts from 0") }
        if !(speed > 0 && speed.isFinite) { throw ValidationError("--speed must be a positive number") }
        if let state, state.isEmpty || state.hasSuffix("/") { throw ValidationError("--state names a file") }
        if let stateInterval, !DaemonSettings.stateIntervals.contains(stateInterval) {
            throw ValidationError("--state-interval must be between \(DaemonSettings.stateIntervals.lowerBound) and \(Int(DaemonSettings.stateIntervals.upperBound)) seconds")
        }
        if let websocket, case .failure(let error) = ListenAddress.parse(websocket) { throw ValidationError("--websocket: \(error)") }
    }

    func run() throws {
        var options = DaemonOptions()
        options.configFile = config
        options.socket = socket
        options.replay = replay
        options.state = state.map { Configuration.absolute($0, in: FileManager.default.currentDirectoryPath) }
        options.stateInterval = stateInterval
        options.replayDevice = replayDevice
        options.loop = loops
        options.speed = speed
        options.websocket = websocket.flatMap { try? ListenAddress.parse($0).get() }
        do {
            try DaemonService.run(options)
        } catch {
            writeStandardError("<3>motiond: \(error)\n")
            throw ExitCode(error.exitStatus)
        }
    }
}
