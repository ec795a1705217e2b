import ArgumentParser
import FoundationEssentials
import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// `motionctl predict RECORDING`: how far each predictor is off on a recording, against how
/// far behind no prediction leaves the finger (docs/prediction.md).
struct PredictCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predict",
        abstract: "Measure touch prediction on a recording: each predictor's error, and the lag without one.",
        discussion: """
            The recording is replayed as the daemon would read it (the configuration's mapping \
            and contact filters, or the built-in 1920 × 1080 screen). For every sample of \
            every contact, each predictor, having seen the samples up to it, predicts where the \
            contact will be HORIZON seconds later, bounded as the daemon bounds it (on the \
            configuration's screen); that is compared with where it really was \
            then, interpolated between its samples; a sample whose contact ends sooner is not \
            compared, and a recording where none is (taps, touches shorter than the horizon, \
            contacts the filters cancel) is refused. Prints the mean, 95th percentile and \
            largest error of each in millimetres, or in screen pixels when the panel reports no \
            resolution; "none" is no prediction, so its error is the lag. --svg draws the 95th \
            percentile against the horizon, from 0 to 50 ms.
            """)

    @Argument(help: "An evemu recording, or a libinput record YAML file.") var recording: String
    @OptionGroup var device: RecordingDeviceOption
    @Option(help: "How far ahead to predict, in seconds (0 to 0.05).") var horizon: Double = 0.016
    @Option(help: ArgumentHelp("One predictor: none, linear, least_squares, kalman or default (default: all).", valueName: "name"))
    var predictor: String?
    @Option(help: "A configuration: its screen, device mapping and contact filters (default: the built-in 1920 × 1080 screen).")
    var config: String?
    @Flag(help: "One JSON object per predictor.") var json = false
    @Option(help: ArgumentHelp("Also draw the 95th percentile error against the horizon to this SVG file.", valueName: "file"))
    var svg: String?

    func validate() throws {
        guard horizon.isFinite, (0...0.05).contains(horizon) else { throw ValidationError("--horizon is in seconds, from 0 to 0.05, not \(horizon)") }
        if let predictor, PredictorKind(rawValue: predictor) == nil {
            throw ValidationError("--predictor takes \(PredictorKind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(predictor)'")
        }
    }

    func run() throws {
        let configuration = try config.map(loadConfiguration) ?? .builtInDefault
        let replay = try loadReplay(recording, device: device, mappedBy: configuration, named: config)
        let replayed = replay.replayedFrames()
        let tracks = PredictionEvaluation.tracks(replayed.compactMap(\.frame))
        // Contacts and their samples as the daemon would see them, after the filters: what
        // the filters cancelled is no prediction's to score.
        let cancelled = Self.cancelled(by: replayed.last?.counts ?? ContactFilters.Counts())
        guard !tracks.isEmpty else {
            writeStandardError("motionctl: \(recording) has no contact with two samples or more\(cancelled): nothing to predict\n")
            throw ExitCode(ExitStatus.refused)
        }
        // A table of zeros would say the predictors were perfect: with no sample followed by
        // `horizon` of its contact, nothing was predicted at all.
        guard PredictionEvaluation.comparisons(tracks, horizon: horizon) > 0 else {
            let longest = tracks.map { ($0.last?.time ?? 0) - ($0.first?.time ?? 0) }.max() ?? 0
            let ms = { (seconds: Double) in formatted("%.0f ms", seconds * 1000) }
            writeStandardError("""
                motionctl: \(recording): nothing to predict \(ms(horizon)) ahead: no contact goes on for \(ms(horizon)) after one of \
                its samples, so no prediction can be compared with where it went (\(tracks.count) contact(s) of two samples or \
                more, the longest lasting \(ms(longest))\(cancelled)); a shorter --horizon may have something to compare

                """)
            throw ExitCode(ExitStatus.refused)
        }
        let units = ErrorUnits(replay)
        let kinds = predictor.map { [PredictorKind(rawValue: $0)!] } ?? PredictorKind.allCases
        // Predictions are bounded as the daemon bounds them, on the configuration's screen.
        let screen = Rect(origin: Point(x: 0, y: 0), size: configuration.screen)
        let results = kinds.map { ($0, PredictionEvaluation.evaluate($0, tracks: tracks, horizon: horizon, screen: screen, distance: units.distance)) }

        report(results, contacts: tracks.count, units: units)
        if let svg { try plot(to: svg, kinds: kinds, tracks: tracks, screen: screen, units: units) }
    }

    /// Each predictor's errors, as a table or (`--json`) a line each.
    private func report(_ results: [(PredictorKind, PredictionEvaluation.Errors)], contacts: Int, units: ErrorUnits) {
        if json {
            for (kind, errors) in results {
                emit(JSONValue.object([
                    ("predictor", .string(kind.rawValue)), ("horizon", .number(horizon)),
                    ("mean_\(units.suffix)", .number(rounded(errors.mean))), ("p95_\(units.suffix)", .number(rounded(errors.p95))),
                    ("max_\(units.suffix)", .number(rounded(errors.max))), ("samples", .integer(Int64(errors.count))),
                ]).encoded)
            }
        } else {
            emit("\(recording): \(contacts) contact(s), \(results.first?.1.count ?? 0) predictions compared \(formatted("%.0f", horizon * 1000)) ms ahead, errors in \(units.name)")
            emit("predictor        mean      p95      max")
            let none = results.first { $0.0 == .none }?.1
            for (kind, errors) in results {
                var line = kind.rawValue.padded(toLength: 14) + formatted("%7.2f  %7.2f  %7.2f", errors.mean, errors.p95, errors.max)
                if kind == .none { line += "   (the lag: where the finger was, against where it is)" }
                if let none, kind != .none, none.p95 > 0 { line += formatted("   p95 %.0f%% of the lag's", 100 * errors.p95 / none.p95) }
                emit(line)
            }
        }
    }

    /// The 95th percentile error of each predictor against the horizon, as an SVG plot in `svg`.
    private func plot(to svg: String, kinds: [PredictorKind], tracks: [[PredictionEvaluation.Sample]], screen: Rect, units: ErrorUnits) throws {
        let horizons = stride(from: 0.0, through: 0.05, by: 0.002).map { $0 }
        let curves = kinds.map { kind in (kind.rawValue, horizons.map { PredictionEvaluation.evaluate(kind, tracks: tracks, horizon: $0, screen: screen, distance: units.distance).p95 }) }
        let title = "\(URL(fileURLWithPath: recording).lastPathComponent): 95th percentile error against horizon"
        let drawing = PredictionPlot(title: title, unit: units.suffix, horizons: horizons, curves: curves).svg()
        do { try drawing.write(toFile: svg, atomically: true, encoding: .utf8) } catch {
            throw ValidationError("cannot write \(svg): \(reason(error))")
        }
    }

    private func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    /// What the contact filters cancelled in the replay, for a refusal: "; the contact
    /// filters cancelled 3 contacts that jumped", or nothing when they cancelled none.
    static func cancelled(by counts: ContactFilters.Counts) -> String {
        let parts = [(counts.jumps, "that jumped"), (counts.stuck, "stuck in place"), (counts.palms, "as palms")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.0 == 1 ? "contact" : "contacts") \($0.1)" }
        guard !parts.isEmpty else { return "" }
        return "; the contact filters cancelled " + parts.joined(separator: ", ")
    }
}

/// What errors are measured in: millimetres on a panel that says its resolution, screen
/// pixels otherwise. Predictors run on screen pixels, as in the daemon; an error is taken
/// back through the mapping to device units, then to millimetres.
private struct ErrorUnits {
    let name: String
    let suffix: String
    let distance: (Point) -> Double

    init(_ replay: RecordingReplay) {
        guard let xAxis = replay.device.axes[AbsoluteAxis.positionX], let yAxis = replay.device.axes[AbsoluteAxis.positionY],
              xAxis.resolution > 0, yAxis.resolution > 0 else {
            name = "screen pixels (the panel reports no resolution)"
            suffix = "px"
            distance = { ($0.x * $0.x + $0.y * $0.y).squareRoot() }
            return
        }
        // The mapping is affine: its linear part from three points, 1000 units apart.
        let mapper = CoordinateMapper(xAxis: xAxis, yAxis: yAxis, mapping: replay.mapping)
        let origin = mapper.pixels(x: 0, y: 0), alongX = mapper.pixels(x: 1000, y: 0), alongY = mapper.pixels(x: 0, y: 1000)
        let a = (alongX.x - origin.x) / 1000, b = (alongY.x - origin.x) / 1000
        let c = (alongX.y - origin.y) / 1000, d = (alongY.y - origin.y) / 1000
        let determinant = a * d - b * c
        let resolution = (x: Double(xAxis.resolution), y: Double(yAxis.resolution))
        name = "millimetres"
        suffix = "mm"
        distance = { error in
            guard determinant != 0 else { return .nan }
            let units = (x: (d * error.x - b * error.y) / determinant, y: (a * error.y - c * error.x) / determinant)
            let mm = (x: units.x / resolution.x, y: units.y / resolution.y)
            return (mm.x * mm.x + mm.y * mm.y).squareRoot()
        }
    }
}

/// The 95th percentile error of each predictor against the horizon, as SVG.
struct PredictionPlot {
    let title: String
    let unit: String
    let horizons: [Double]
    let curves: [(name: String, p95: [Double])]

    private let width = 800.0, height = 440.0
    private let left = 70.0, right = 150.0, top = 50.0, bottom = 50.0
    private static let colours = ["#888888", "#e65100", "#2e7d32", "#6a1b9a", "#1565c0"]

    func svg() -> String {
        let highest = Swift.max(curves.flatMap(\.p95).filter(\.isFinite).max() ?? 1, 1e-6) * 1.08
        let longest = horizons.last ?? 0.05
        let chart = SVGChart(width: width, height: height, margins: (left, right, top, bottom), xRange: 0...longest, yRange: 0...highest)
        let x = chart.x, y = chart.y, n = SVGChart.n
        let axisY = height - bottom
        var parts = chart.opening(title: title)
        parts += chart.axes(xName: "horizon (ms)", xTick: { formatted("%.0f", $0 * 1000) }, yTick: { formatted("%.3g", $0) })
        parts.append(##"<text x="16" y="\##(n((top + axisY) / 2))" transform="rotate(-90 16 \##(n((top + axisY) / 2)))" text-anchor="middle">p95 error (\##(unit))</text>"##)
        for (index, curve) in curves.enumerated() {
            let colour = Self.colours[index % Self.colours.count]
            let points = zip(horizons, curve.p95).filter { $0.1.isFinite }.map { "\(n(x($0.0))),\(n(y($0.1)))" }.joined(separator: " ")
            let dash = curve.name == "none" ? ##" stroke-dasharray="6 4""## : ""
            parts.append(##"<polyline points="\##(points)" fill="none" stroke="\##(colour)" stroke-width="\##(curve.name == "default" ? 3 : 1.5)"\##(dash)/>"##)
            let legendY = top + 10 + Double(index) * 20
            parts.append(##"<line x1="\##(n(width - right + 12))" y1="\##(n(legendY))" x2="\##(n(width - right + 36))" y2="\##(n(legendY))" stroke="\##(colour)" stroke-width="\##(curve.name == "default" ? 3 : 1.5)"\##(dash)/>"##)
            parts.append(##"<text x="\##(n(width - right + 42))" y="\##(n(legendY + 4))">\##(SVGChart.escaped(curve.name))</text>"##)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }
}
