import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import TouchInput
import TouchModel
import MotionWire

/// `motionctl calibrate`: fits a touchscreen's calibration matrix, from touch/target pairs in
/// a file (`--fit`) or from the screen itself, with targets shown on motiond's page.
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Calibrate a touchscreen: targets on motiond's page at /calibrate, the matrix written as a drop-in.",
        discussion: """
            With the daemon running (and its web listener, [websocket] listen), shows targets \
            one at a time on the calibration page (http://LISTENER/calibrate, opened on the \
            kiosk's screen), reads where the touchscreen puts each touch, refuses a touch far \
            from its target as a misclick, fits the matrix by least squares, checks it on one \
            more target, and writes it to a drop-in in conf.d beside the daemon's \
            configuration file as a [[calibration]] table that selects the touchscreen by \
            where it is plugged in (udev's ID_PATH: 90-calibration-path-PATH.toml), else by \
            its ids (90-calibration-VENDOR-PRODUCT.toml), then reloads and checks that the \
            new matrix is in force (if not, the file is taken back and it fails saying why). \
            While it runs, that touchscreen's new touches go to the calibration, not to the scene.

            --fit FILE fits pairs from a file instead, one JSON object per line of at most 4096 bytes: \
            {"device": [u, v], "screen": [x, y]}, both in libinput's normalised units (0..1 of \
            the device's axis ranges, and of its output rectangle before rotation and flips), \
            and prints the matrix in LIBINPUT_CALIBRATION_MATRIX order with each pair's residual.

            --export udev runs no calibration: it prints the udev rule that gives the \
            touchscreen's mapping in force now in motiond (its calibration, flips and rotation, \
            as one LIBINPUT_CALIBRATION_MATRIX) to libinput, selected by udev's ID_PATH, so that \
            a libinput compositor (cage, weston, sway, GNOME, X11's libinput driver) maps the \
            panel that way without motiond. Calibrate first, then export. Not in the matrix, \
            and said on standard error: the output rectangle (the compositor maps the panel \
            onto a display itself) and motiond's filters. A device without an ID_PATH (a \
            virtual one) is refused. --output FILE writes the rule to FILE instead, atomically \
            (- for standard output): a new file, or one an export wrote (or an empty one); \
            a link, a FIFO, a device or any other file there is left alone and refused.
            """
    )

    @Option(help: ArgumentHelp("Fit the touch/target pairs in this file (- for standard input) and print the matrix.", valueName: "file"))
    var fit: String?
    @Option(help: ArgumentHelp("The touchscreen to calibrate, by its node (default: the only one).", valueName: "node"))
    var device: String?
    @Option(help: "How many targets: 4 (the corners, inset by an eighth), 5 (and the centre) or 9 (a 3 × 3 grid).")
    var points = 5
    @Option(help: ArgumentHelp("Give up when a target is not touched within this many seconds.", valueName: "seconds"))
    var timeout = 60.0
    @Option(help: ArgumentHelp("A touch farther than this from its target is a misclick (default: a tenth of the output's diagonal).", valueName: "pixels"))
    var misclick: Double?
    @Option(help: ArgumentHelp("The check target must be hit within this (default: 1/50 of the output's diagonal).", valueName: "pixels"))
    var tolerance: Double?
    @Flag(help: "JSON lines instead of words.") var json = false
    @Option(help: ArgumentHelp("Print the touchscreen's mapping in force as a udev rule for libinput instead of calibrating.", valueName: "udev"))
    var export: ExportFormat?
    @Option(help: ArgumentHelp("With --export: write the rule to this file (a new one, or one an export wrote; - for standard output).", valueName: "file"))
    var output: String?
    @OptionGroup var socket: SocketOption

    func validate() throws {
        guard [4, 5, 9].contains(points) else { throw ValidationError("--points is 4, 5 or 9") }
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
        for (name, value) in [("--misclick", misclick), ("--tolerance", tolerance)] {
            if let value, !(value > 0 && value.isFinite) { throw ValidationError("\(name) must be a positive number of pixels") }
        }
        if fit != nil && device != nil { throw ValidationError("--fit reads pairs from a file; --device is for calibrating on the screen") }
        if export != nil && (fit != nil || json) { throw ValidationError("--export prints a rule for the mapping motiond has now; it takes no --fit or --json") }
        if output != nil && export == nil { throw ValidationError("--output is where --export udev writes its rule") }
    }

    func run() throws {
        if let fit { return try fitFile(fit) }
        if export != nil { return try talking { try UdevExport(command: self).run() } }
        try talking { try CalibrationRun(command: self).run() }
    }

    // MARK: --fit

    /// The longest line a pairs file may have, in bytes. A pair is under 100; the limit
    /// leaves room for long numbers and spaces, and bounds what one line can cost.
    static let longestLine = 4096

    /// Fits the pairs of the file at `path` (`-` for standard input), read a line at a
    /// time, and prints the matrix; a matrix or a residual that is not finite is refused,
    /// never printed.
    private func fitFile(_ path: String) throws {
        let name = path == "-" ? "standard input" : path
        var pairs: [CalibrationPair] = []
        do throws(LineReader.Failure) {
            var lines = try LineReader(path: path, limit: Self.longestLine)
            while let line = try lines.next() {
                guard line.contains(where: { ![0x20, 0x09, 0x0d].contains($0) }) else { continue }
                do { pairs.append(try Self.pair(line)) } catch { fail("motionctl: \(path):\(lines.lineNumber): \(error)") }
            }
        } catch {
            switch error {
            case .tooLong(let line, let limit):
                fail("motionctl: \(path):\(line): a line is longer than \(limit) bytes; a pair is {\"device\": [u, v], \"screen\": [x, y]}, one a line")
            case .unreadable:
                fail("motionctl: cannot read \(name): \(error)")
            }
        }
        let result: CalibrationFit
        do { result = try CalibrationFit(pairs) } catch { fail("motionctl: \(path): \(error)") }
        if json {
            emit(JSONValue.object([
                ("matrix", .array(result.matrix.map { .number($0) })),
                ("residuals", .array(result.residuals.map { .number($0) })), ("rms", .number(result.rms)),
            ]).encoded)
            return
        }
        let six = { (value: Double) in formatted("%.6f", value) }
        emit("matrix: " + result.matrix.map(six).joined(separator: " "))
        if let refusal = Configuration.calibrationMatrixRefusal(result.matrix) {
            emit("motiond.toml refuses it: \(refusal)")
        } else {
            emit("as motiond.toml takes it: calibration = [" + result.matrix.map(six).joined(separator: ", ") + "]")
        }
        for (index, residual) in result.residuals.enumerated() { emit("  pair \(index + 1): off by \(six(residual))") }
        emit("rms \(six(result.rms)) (normalised units: 0.001 is a thousandth of the output)")
    }

    struct PairError: Error, CustomStringConvertible { var description: String }

    /// One line of a pairs file: `{"device": [u, v], "screen": [x, y]}`.
    static func pair(_ line: [UInt8]) throws -> CalibrationPair {
        let input: JSONInput
        do { input = try JSONInput(parsing: line) } catch { throw PairError(description: "not JSON: \(error)") }
        func point(_ key: String) throws -> Point {
            guard let array = input[key]?.array, array.count == 2, let x = array[0].number, let y = array[1].number, x.isFinite, y.isFinite else {
                throw PairError(description: "a pair is {\"device\": [u, v], \"screen\": [x, y]} with finite numbers; \"\(key)\" is not two numbers")
            }
            return Point(x: x, y: y)
        }
        guard case .object(let members) = input else { throw PairError(description: "a pair is a JSON object") }
        if let extra = members.keys.first(where: { $0 != "device" && $0 != "screen" }) {
            throw PairError(description: "a pair has only \"device\" and \"screen\", not \"\(extra)\"")
        }
        return CalibrationPair(device: try point("device"), screen: try point("screen"))
    }
}

/// A touchscreen as the daemon reports it: where it is, where it maps and how.
struct DaemonTouchscreen {
    let node: String
    let name: String
    /// udev's `ID_PATH`, where it is plugged in; nil when udev does not say.
    let path: String?
    let ids: (vendor: Int, product: Int)
    let output: Rect
    let mapping: OutputMapping

    /// The touchscreen at `wanted`, else the only one the daemon reads; exits saying which
    /// there are when that is not one, `doing` naming what it was for ("calibrate").
    static func choose(_ wanted: String?, from connection: DaemonConnection, doing: String) throws -> DaemonTouchscreen {
        let devices = try connection.request("devices")["devices"]?.array ?? []
        let chosen: JSONInput
        if let wanted {
            guard let found = devices.first(where: { $0["node"]?.string == wanted }) else {
                fail("motionctl: motiond reads no touchscreen at \(wanted); it reads \(devices.compactMap { $0["node"]?.string }.joined(separator: ", "))")
            }
            chosen = found
        } else {
            guard devices.count == 1, let only = devices.first else {
                fail(devices.isEmpty ? "motionctl: motiond reads no touchscreen to \(doing)"
                     : "motionctl: motiond reads \(devices.count) touchscreens; choose one with --device: \(devices.compactMap { $0["node"]?.string }.joined(separator: ", "))")
            }
            chosen = only
        }
        return DaemonTouchscreen(chosen)
    }

    private init(_ chosen: JSONInput) {
        node = chosen["node"]?.string ?? ""
        name = chosen["name"]?.string ?? ""
        path = chosen["path"]?.string
        ids = (Int(chosen["vendor"]?.string.flatMap { Int($0.dropFirst(2), radix: 16) } ?? 0),
               Int(chosen["product"]?.string.flatMap { Int($0.dropFirst(2), radix: 16) } ?? 0))
        guard let rect = chosen["output"], let x = rect["x"]?.number, let y = rect["y"]?.number,
              let width = rect["width"]?.number, let height = rect["height"]?.number,
              let map = chosen["mapping"], let rotation = map["rotation"]?.integer.flatMap(Rotation.init(rawValue:)),
              let matrix = map["calibration"]?.array?.compactMap(\.number), matrix.count == 6 else {
            fail("motionctl: motiond does not say where \(chosen["node"]?.string ?? "the touchscreen") maps (an older motiond?)")
        }
        output = Rect(x: x, y: y, width: width, height: height)
        mapping = OutputMapping(outputSize: output.size, outputOrigin: output.origin, rotation: rotation,
                                flipHorizontal: map["flip_horizontal"]?.bool ?? false, flipVertical: map["flip_vertical"]?.bool ?? false,
                                calibration: matrix)
    }
}

/// One calibration on the screen, from the first target to the reload.
private struct CalibrationRun {
    let command: CalibrateCommand
    let connection: DaemonConnection

    /// The device's node, output and mapping, as the daemon reports them.
    let node: String
    let name: String
    let ids: (vendor: Int, product: Int)
    /// udev's `ID_PATH`, where it is plugged in; nil when udev does not say.
    let path: String?
    let output: Rect
    let mapping: OutputMapping
    /// Where the configuration's drop-ins go.
    let dropIns: URL

    init(command: CalibrateCommand) throws {
        self.command = command
        guard command.socket.isLocal else {
            fail("motionctl: calibrate writes the daemon's configuration, so it runs on the kiosk, over the Unix socket, not \(command.socket.path)")
        }
        switch command.socket.connectIfAnswering() {
        case .success(let connection): self.connection = connection
        case .failure(let error):
            writeStandardError("""
                motionctl: calibrate needs motiond running: it reads the touches through motiond and shows the targets on motiond's page; cannot connect at \(command.socket.path): \(error)

                """)
            Glibc.exit(ExitStatus.cannotConnect)
        }
        guard connection.hello["control"]?.bool == true else {
            fail("motionctl: calibrate changes the daemon's configuration: run it as root, as motiond's user or as a member of [daemon] control_groups")
        }
        let stats = try connection.request("stats")
        guard let file = stats["config"]?["file"]?.string else {
            fail("motionctl: motiond runs without a configuration file, so a calibration has nowhere to go: start it with --config FILE (its drop-ins go to conf.d beside FILE)")
        }
        dropIns = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("conf.d")
        guard stats["web"]?.string != nil else {
            fail("motionctl: calibrate shows its targets on motiond's page, and motiond has no web listener: set [websocket] listen = \"127.0.0.1:8765\" in \(file) and restart it")
        }
        let chosen = try DaemonTouchscreen.choose(command.device, from: connection, doing: "calibrate")
        node = chosen.node
        name = chosen.name
        path = chosen.path
        ids = chosen.ids
        output = chosen.output
        mapping = chosen.mapping
        self.stats = stats
    }

    private let stats: JSONInput

    /// The targets, in 0…1 of the output as the picture shows it: xinput_calibrator's corners
    /// inset by an eighth, the centre, a 3 × 3 grid; and weston's check point.
    static func targets(_ count: Int) -> [Point] {
        let near = 0.125, far = 0.875
        switch count {
        case 4: return [Point(x: near, y: near), Point(x: far, y: near), Point(x: near, y: far), Point(x: far, y: far)]
        case 5: return targets(4) + [Point(x: 0.5, y: 0.5)]
        default: return [near, 0.5, far].flatMap { y in [near, 0.5, far].map { Point(x: $0, y: y) } }
        }
    }

    static let check = Point(x: 0.70, y: 0.75)

    private var diagonal: Double { (output.size.width * output.size.width + output.size.height * output.size.height).squareRoot() }

    func run() throws {
        let web = stats["web"]?.string ?? ""
        let url = "http://\(web)/calibrate"
        say(["step": .string("open"), "url": .string(url), "device": .string(node)],
            "open \(url) full-screen on the display of \(node) (\(OutsideText.quoted(name))), then touch each cross as it appears")
        defer { _ = try? connection.request("calibrate", [("device", .string(node)), ("end", true)]) }

        let targets = Self.targets(command.points)
        let steps = targets.count + 1
        var pairs: [CalibrationPair] = []
        for (index, target) in targets.enumerated() {
            let raw = try touch(target, step: index + 1, of: steps)
            pairs.append(CalibrationPair(device: raw, screen: mapping.calibrationSpace(target)))
        }
        let fit: CalibrationFit
        do { fit = try CalibrationFit(pairs) } catch { fail("motionctl: \(error)") }
        let rmsPixels = fit.rms * (output.size.width + output.size.height) / 2

        // The check: one more target, judged by the new matrix alone.
        var fitted = mapping
        fitted.calibration = fit.matrix
        let raw = try touch(Self.check, step: steps, of: steps)
        let checkPixels = fitted.place(raw, outputSize: output.size).distance(to: place(Self.check))
        let tolerance = command.tolerance ?? diagonal / 50
        guard checkPixels <= tolerance else {
            fail("motionctl: the check target was missed by \(compactNumber(checkPixels.rounded())) px with the new matrix (at most \(compactNumber(tolerance.rounded())) allowed): the touches disagree; nothing was written, calibrate again")
        }

        let path = try write(fit.matrix, note: "\(command.points) targets, rms \(formatted("%.2f", rmsPixels)) px, check target off by \(formatted("%.2f", checkPixels)) px")
        say(["step": .string("written"), "path": .string(path.path), "matrix": .array(fit.matrix.map { .number($0) }),
             "rms_px": .number(rmsPixels), "check_px": .number(checkPixels)],
            "wrote \(path.path): calibration = [\(fit.matrix.map(compactNumber).joined(separator: ", "))] (rms \(formatted("%.2f", rmsPixels)) px, check \(formatted("%.2f", checkPixels)) px)")
        say(["step": .string("reloaded")], "motiond reloaded its configuration: \(node) uses the new matrix")
    }

    /// A point of the output (0…1 as shown) in screen pixels.
    private func place(_ point: Point) -> Point {
        Point(x: output.origin.x + point.x * output.size.width, y: output.origin.y + point.y * output.size.height)
    }

    /// Shows `target` and waits for a touch near it; the touch's raw position.
    private func touch(_ target: Point, step: Int, of steps: Int) throws -> Point {
        let screen = place(target)
        var message = ""
        var uncalibrated = mapping
        uncalibrated.calibration = OutputMapping.identityCalibration
        let limit = command.misclick ?? diagonal / 10
        while true {
            _ = try connection.request("calibrate", [
                ("device", .string(node)), ("target", .point(screen)), ("step", .integer(Int64(step))),
                ("steps", .integer(Int64(steps))), ("message", .string(message)),
            ])
            say(["step": .string("target"), "index": .integer(Int64(step)), "of": .integer(Int64(steps)), "x": .number(screen.x), "y": .number(screen.y)],
                "target \(step) of \(steps) at (\(compactNumber(screen.x.rounded())), \(compactNumber(screen.y.rounded())))")
            let deadline = monotonicNow() + command.timeout
            guard let raw = try nextTouch(until: deadline) else {
                fail("motionctl: target \(step) was not touched within \(compactNumber(command.timeout)) s; nothing was written")
            }
            // Near the target as the panel maps now, or as it would with no calibration at
            // all: a panel whose old calibration is far off can still be calibrated.
            let distance = Swift.min(mapping.place(raw, outputSize: output.size).distance(to: screen),
                                     uncalibrated.place(raw, outputSize: output.size).distance(to: screen))
            if distance <= limit { return raw }
            say(["step": .string("misclick"), "index": .integer(Int64(step)), "distance": .number(distance)],
                "  that touch was \(compactNumber(distance.rounded())) px from the target (at most \(compactNumber(limit.rounded())) allowed): touch it again")
            message = "That touch was \(compactNumber(distance.rounded())) px from the cross: touch the centre of the cross (\(step) of \(steps))"
        }
    }

    /// The next `calibration_touch` of the device, or nil at the deadline.
    private func nextTouch(until deadline: Double) throws -> Point? {
        while let event = try connection.nextEvent(until: deadline) {
            if event["event"]?.string == "device", event["action"]?.string == "removed", event["node"]?.string == node {
                fail("motionctl: \(node) went away during the calibration; nothing was written")
            }
            guard event["event"]?.string == "calibration_touch", event["device"]?.string == node,
                  let x = event["raw"]?["x"]?.number, let y = event["raw"]?["y"]?.number else { continue }
            return Point(x: x, y: y)
        }
        return nil
    }

    /// Writes the drop-in atomically (a hidden file the loader skips, renamed into place),
    /// has motiond reload, and checks that the device now maps with `matrix`; if motiond
    /// refuses the result, or reloads without the new matrix taking effect, puts back what
    /// was there and fails saying why.
    private func write(_ matrix: [Double], note: String) throws -> URL {
        let manager = FileManager.default
        do { try manager.createDirectory(at: dropIns, withIntermediateDirectories: true) } catch {
            fail("motionctl: cannot create \(dropIns.path): \(reason(error))")
        }
        let dropIn = CalibrationDropIn(name: name, node: node, path: path, vendor: UInt16(truncatingIfNeeded: ids.vendor),
                                       product: UInt16(truncatingIfNeeded: ids.product), matrix: matrix, note: note)
        let file = dropIns.appendingPathComponent(dropIn.fileName)
        let previous = manager.contents(atPath: file.path)
        func takeBack() {
            if let previous { try? replace(file, with: previous) } else { try? manager.removeItem(at: file) }
            _ = try? connection.request("reload")
        }
        try replace(file, with: Data(dropIn.text.utf8))
        do { _ = try connection.request("reload") } catch let refused as Refused {
            takeBack()
            fail("motionctl: motiond refused the configuration with the calibration, so it was taken back: \(refused.message)")
        }
        // The reload is taken only if the daemon read this file and it selects this panel:
        // a drop-in written where motiond does not look would otherwise "succeed" unread.
        // motiond answers the reload before its input thread has handed each device its new
        // mapping, so the matrix is looked for until it shows, for at most a few seconds.
        func matches(_ inForce: [Double]) -> Bool {
            inForce.count == 6 && zip(inForce, matrix).allSatisfy({ Swift.abs($0 - $1) <= 1e-9 * Swift.max(1, Swift.abs($1)) })
        }
        let patience = monotonicNow() + Self.mappingPatience
        var device: JSONInput?
        var inForce: [Double] = []
        repeat {
            if device != nil { usleep(50_000) }
            device = try connection.request("devices")["devices"]?.array?.first { $0["node"]?.string == node }
            inForce = device?["mapping"]?["calibration"]?.array?.compactMap(\.number) ?? []
        } while !matches(inForce) && device != nil && monotonicNow() < patience
        guard matches(inForce) else {
            takeBack()
            let selected = device?["selected_by"]?["calibration"].flatMap { rule in rule["key"]?.string.map { "\($0) = \(OutsideText.quoted(rule["value"]?.string ?? ""))" } }
            fail("""
                motionctl: motiond reloaded, but \(node) still maps with [\(inForce.map(compactNumber).joined(separator: ", "))], not the new matrix, \
                so \(file.path) was taken back: \(device == nil ? "motiond no longer reads \(node)" : selected.map { "its calibration comes from a [[calibration]] selecting it by \($0)" } ?? "motiond does not read that file (is \(dropIns.path) beside the configuration motiond was started with?)")
                """)
        }
        return file
    }

    /// How long calibrate waits for a reloaded matrix to reach the panel.
    static let mappingPatience = 5.0

    private func say(_ fields: KeyValuePairs<String, JSONValue>, _ words: String) {
        if command.json { emit(JSONValue.object(fields.map { ($0.key, $0.value) }).encoded) } else { emit(words) }
    }
}

/// Writes `data` to `path` atomically: to a hidden file beside it (which the configuration
/// loader and udev skip), synced, then renamed into place; exits saying why it cannot.
func replace(_ path: URL, with data: Data) throws {
    let temporary = path.deletingLastPathComponent().appendingPathComponent(".\(path.lastPathComponent).\(getpid())")
    let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { fail("motionctl: cannot write \(temporary.path): \(String(cString: strerror(errno)))") }
    let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    let synced = fsync(fd) == 0
    close(fd)
    guard written == data.count, synced, rename(temporary.path, path.path) == 0 else {
        unlink(temporary.path)
        fail("motionctl: cannot write \(path.path): \(String(cString: strerror(errno)))")
    }
    let directory = open(path.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directory >= 0 { fsync(directory); close(directory) }
}
