import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import MotionCore
import TouchModel
import MotionWire
import MotionDaemon

/// `motionctl state`: the scene motiond keeps across restarts (`[daemon] state`, `--state`).
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Show or clear the scene motiond keeps across restarts.",
        subcommands: [ShowStateCommand.self, ClearStateCommand.self], defaultSubcommand: ShowStateCommand.self)
}

/// `motionctl state show`: what the running daemon last wrote, or what a file holds.
struct ShowStateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show the scene kept: the running daemon's, or a state file's.",
        discussion: """
            Without --file, asks motiond: its state file, when it last wrote it, why the last \
            write failed if it did, and the elements the file holds. With --file, reads the file \
            as motiond would at start, without a daemon (a file set aside as FILE.refused, say): \
            its elements, or why motiond refuses it (exit code 1). Positions are checked against \
            the screen of --config (default /etc/motiond/motiond.toml, else the built-in screen).
            """)
    @OptionGroup var socket: SocketOption
    @Option(help: ArgumentHelp("Read this state file instead of asking motiond.", valueName: "file")) var file: String?
    @Option(help: ArgumentHelp("With --file: the configuration whose screen the positions are checked against.", valueName: "file")) var config: String?
    @Flag(help: "JSON even on a terminal.") var json = false

    func run() throws {
        if let file { return try show(file: file) }
        try talking {
            let saved = try socket.connect().request("saved_scene")
            if Voice.json(asked: json) { return emit(saved.json.encoded) }
            guard let path = saved["file"]?.string else {
                return emit("motiond keeps no scene: give it --state FILE or [daemon] state")
            }
            let written = saved["written"]?.number.map { formatted("last written %.1f s ago", $0) } ?? "not written yet"
            emit("\(path): \(written), \(saved["writes"]?.integer ?? 0) write(s), \(saved["failed_writes"]?.integer ?? 0) failed, at most every \(compactNumber(saved["interval"]?.number ?? 0)) s")
            if let error = saved["error"]?.string { emit("  the last write failed: \(error)") }
            for element in saved["elements"]?.array ?? [] { emit("  " + Self.line(element)) }
        }
    }

    private func show(file path: String) throws {
        // The configuration motiond would read: --config, else the default file if there is one.
        let screen = try (Configuration.fileToRead(given: config).map(loadConfiguration) ?? .builtInDefault).screen
        let reading: StateFileReading?
        do { reading = try StateFile(path: path).read(limits: ValueLimits(screen: screen)) } catch {
            fail("motionctl: \(error)")
        }
        guard let reading else { fail("motionctl: there is no file \(path)") }
        let state = reading.contents?.state ?? SceneState(elements: [])
        if Voice.json(asked: json) {
            return emit(JSONValue.object([("elements", .array(state.elements.map(SceneState.json)))]).encoded)
        }
        emit("\(path): \(state.elements.count) element(s), \(state.elements.count { $0.added != nil }) added by clients")
        if let cutShort = reading.contents?.cutShortBytes, cutShort > 0 {
            emit("  the last write was cut short (\(cutShort) bytes): motiond ignores it, and this is the scene the write before left")
        }
        for element in state.elements {
            emit("  " + Self.words(id: element.id, position: element.position, rotation: element.rotation, scale: element.scale,
                                   destination: element.destination, added: element.added != nil))
        }
    }

    /// An element of `saved_scene`, in words.
    private static func line(_ element: JSONInput) -> String {
        func point(_ value: JSONInput?) -> Point? {
            guard let pair = value?.array, pair.count == 2, let x = pair[0].number, let y = pair[1].number else { return nil }
            return Point(x: x, y: y)
        }
        return words(id: element["id"]?.string ?? "?", position: point(element["position"]) ?? .zero, rotation: element["rotation"]?.number ?? 0,
                     scale: element["scale"]?.number ?? 1, destination: point(element["destination"]), added: element["added"]?.object != nil)
    }

    private static func words(id: String, position: Point, rotation: Double, scale: Double, destination: Point?, added: Bool) -> String {
        id + formatted("  at (%.1f, %.1f)  rotation %.3f  scale %.3f", position.x, position.y, rotation, scale)
            + (destination.map { formatted("  going to (%.1f, %.1f)", $0.x, $0.y) } ?? "")
            + (added ? "  added by a client" : "")
    }
}

/// `motionctl state clear`: start afresh from the configuration.
struct ClearStateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear", abstract: "Start the scene afresh from the configuration, forgetting what clients added and moved.",
        discussion: """
            Asks motiond to make its scene anew from the configuration (the reset_scene op, which \
            needs control) and to write that to its state file at once. With --file, for a \
            daemon that is stopped, removes that state file instead: motiond then starts from \
            the configuration.
            """)
    @OptionGroup var socket: SocketOption
    @Option(help: ArgumentHelp("Remove this state file instead of asking motiond (for a stopped daemon).", valueName: "file")) var file: String?

    func run() throws {
        if let file {
            let stateFile = StateFile(path: file)
            do {
                // While a motiond keeps its scene there, it would write it again: ask it instead.
                let lock = try stateFile.lock()
                defer { withExtendedLifetime(lock) {} }
                guard try stateFile.removeIfStateFile() else { return emit("there is no file \(file): motiond starts from the configuration") }
            } catch {
                fail("motionctl: not removed: \(error)")
            }
            return emit("removed \(file): motiond starts from the configuration")
        }
        try talking {
            let result = try socket.connect().request("reset_scene")
            emit("the scene is the configuration's again: \(result["elements"]?.integer ?? 0) element(s)")
        }
    }
}
