import ArgumentParser
import FoundationEssentials
import MotionConfiguration
import MotionCore
import TouchInput

/// `motionctl plot`: a recording as a picture on the screen's rectangle.
struct PlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a recording's fingers, gestures and (with --config) elements as SVG.",
        discussion: """
            On the screen's rectangle (the built-in 1920 × 1080, or the configuration's, with \
            its [[device]] mapping): each finger's trace in a colour of its own, a filled dot \
            where it landed, a ring where it lifted and a cross where it was cancelled; where \
            the recognizers' drag, pinch and rotation began and ended and where taps were \
            recognized (the centroid of the fingers then); and with --config the elements \
            where they were configured and, dashed, the paths simulate gives their centres. \
            Someone tuning thresholds or a scene would rather look than read.
            """
    )

    @Argument(help: "A recording: evemu, or libinput record YAML.") var recording: String
    @OptionGroup var device: RecordingDeviceOption
    @Option(help: ArgumentHelp("Where to write the SVG ('-' for standard output).", valueName: "file")) var svg: String
    @Option(help: "A configuration: its screen, device mapping, thresholds and elements (default: the built-in screen, no elements drawn).")
    var config: String?

    func run() throws {
        let configuration = try config.map(loadConfiguration) ?? .builtInDefault
        let replay = try loadReplay(recording, device: device, mappedBy: configuration, named: config)
        let frames = replay.frames()
        var plot = TouchPlot(screen: configuration.screen, title: fileName(recording), device: OutsideText.quoted(replay.device.name))
        plot.add(frames: frames, thresholds: configuration.gestures)
        if config != nil { plot.add(elements: configuration, frames: frames) }
        let text = plot.svg()
        if svg == "-" {
            writeStandardOutput(text)
        } else {
            do { try text.write(toFile: svg, atomically: true, encoding: .utf8) } catch {
                fail("motionctl: cannot write \(svg): \(reason(error))")
            }
            writeStandardError("motionctl: \(plot.summary) drawn in \(svg)\n")
        }
    }
}

/// The last component of `path`, the plot's title: NSString's `lastPathComponent`, which
/// ignores trailing and repeated slashes and leaves "/" as it is.
private func fileName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? (path.isEmpty ? "" : "/")
}

/// What a plot shows, gathered from frames, recognizers and a simulation, then drawn.
struct TouchPlot {
    /// One finger from landing to lifting, in screen pixels.
    struct Trace {
        var points: [Point]
        var end: TouchPhase?
    }
    /// A recognizer's event worth a mark: a continuous gesture's start or end, a tap.
    struct Mark {
        var label: String
        var at: Point
    }

    let screen: Size
    let title: String
    let device: String
    private(set) var traces: [Trace] = []
    private(set) var marks: [Mark] = []
    /// Each element's configured rectangle and the path of its centre.
    private(set) var elements: [(settings: ElementSettings, path: [Point])] = []

    init(screen: Size, title: String, device: String) {
        self.screen = screen
        self.title = title
        self.device = device
    }

    var summary: String { "\(traces.count) fingers, \(marks.count) gesture marks, \(elements.count) elements" }

    /// The fingers' traces and the recognizers' marks, as `motionctl gestures` runs them.
    mutating func add(frames: [TouchFrame], thresholds: GestureThresholds) {
        var open: [Int32: Int] = [:]
        var gestures = GestureSet(thresholds: thresholds)
        for frame in frames {
            for contact in frame.contacts {
                if contact.phase == .began || open[contact.trackingID] == nil {
                    open[contact.trackingID] = traces.count
                    traces.append(Trace(points: []))
                }
                let index = open[contact.trackingID]!
                traces[index].points.append(contact.position)
                if !contact.phase.isActive {
                    traces[index].end = contact.phase
                    open[contact.trackingID] = nil
                }
            }
            let fingers = frame.contacts.map(\.position)
            let centroid = fingers.isEmpty ? nil : fingers.reduce(Point(x: 0, y: 0), +) * (1 / Double(fingers.count))
            for gesture in gestures.update(frame) {
                let state = gesture.state
                guard state == .began || state == .ended || state == .cancelled || state == .recognized else { continue }
                let at: Point?
                switch gesture {
                case .tap(let tap): at = tap.location
                case .longPress(let press): at = press.location
                default: at = centroid
                }
                if let at { marks.append(Mark(label: "\(gesture.kind.rawValue) \(state.rawValue)", at: at)) }
            }
        }
    }

    /// The configured elements, and where `simulate` moves their centres on these frames.
    mutating func add(elements configuration: Configuration, frames: [TouchFrame]) {
        let clock = ManualFrameClock(now: 0)
        let engine = configuration.makeEngine(clock: clock)
        var paths: [String: [Point]] = Dictionary(uniqueKeysWithValues: configuration.elements.map { ($0.id, [$0.center]) })
        let outcome = Simulation(frameRate: configuration.daemon.frameRate).run(frames, through: engine, clock: clock)
        for update in outcome.updates {
            guard case .point(let point) = update.value, let stream = ElementStream(name: update.stream), stream.property == "position" else { continue }
            paths[stream.element, default: []].append(point)
        }
        elements = configuration.elements.map { ($0, paths[$0.id] ?? []) }
    }

    // MARK: Drawing

    /// Colours told apart by most eyes, one per finger in turn.
    static let palette = ["#1565c0", "#e65100", "#2e7d32", "#c62828", "#6a1b9a", "#00838f", "#ad1457", "#4e342e", "#f9a825", "#37474f"]

    func svg() -> String {
        let margin = 20.0, header = 74.0
        // About 1200 px wide, whatever the screen: small screens are drawn larger.
        let scale = Swift.min(2, 1200 / screen.width)
        let width = screen.width * scale + 2 * margin, height = screen.height * scale + header + margin
        func x(_ v: Double) -> String { formatted("%.1f", margin + v * scale) }
        func y(_ v: Double) -> String { formatted("%.1f", header + v * scale) }
        func n(_ v: Double) -> String { formatted("%.1f", v) }

        var parts: [String] = []
        parts.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width.rounded(.up)))" height="\##(Int(height.rounded(.up)))" viewBox="0 0 \##(n(width)) \##(n(height))" font-family="sans-serif" font-size="12">"##)
        parts.append(##"<rect width="100%" height="100%" fill="white"/>"##)
        parts.append(##"<text x="\##(n(margin))" y="22" font-size="15">\##(escape(title))</text>"##)
        parts.append(##"<text x="\##(n(margin))" y="42" fill="#555">\##(escape(device)) on a \##(compactNumber(screen.width)) × \##(compactNumber(screen.height)) px screen: \##(escape(summary)).</text>"##)
        parts.append(##"<text x="\##(n(margin))" y="60" fill="#555">Filled dot: a finger landed; ring: it lifted; cross: it was cancelled; diamond: a recognizer began, ended or recognized; dashed: an element's centre.</text>"##)
        parts.append(##"<rect class="screen" x="\##(x(0))" y="\##(y(0))" width="\##(n(screen.width * scale))" height="\##(n(screen.height * scale))" fill="#fafafa" stroke="black"/>"##)

        for (settings, path) in elements {
            let w = settings.size.width * settings.scale * scale, h = settings.size.height * settings.scale * scale
            let degrees = settings.rotation * 180 / .pi
            parts.append(##"<g class="element" data-id="\##(escape(settings.id))"><rect x="\##(n(-w / 2))" y="\##(n(-h / 2))" width="\##(n(w))" height="\##(n(h))" transform="translate(\##(x(settings.center.x)) \##(y(settings.center.y))) rotate(\##(n(degrees)))" fill="none" stroke="#999"/>"##)
            parts.append(##"<text x="\##(x(settings.center.x))" y="\##(y(settings.center.y))" text-anchor="middle" fill="#777">\##(escape(settings.id))</text>"##)
            if path.count > 1 {
                parts.append(##"<polyline class="element-path" points="\##(path.map { "\(x($0.x)),\(y($0.y))" }.joined(separator: " "))" fill="none" stroke="#777" stroke-width="1.5" stroke-dasharray="5 4"/>"##)
            }
            parts.append("</g>")
        }
        for (index, trace) in traces.enumerated() {
            let colour = Self.palette[index % Self.palette.count]
            guard let first = trace.points.first, let last = trace.points.last else { continue }
            parts.append(##"<g class="finger" data-end="\##(trace.end?.rawValue ?? "down")">"##)
            parts.append(##"<polyline points="\##(trace.points.map { "\(x($0.x)),\(y($0.y))" }.joined(separator: " "))" fill="none" stroke="\##(colour)" stroke-width="2"/>"##)
            parts.append(##"<circle class="landing" cx="\##(x(first.x))" cy="\##(y(first.y))" r="5" fill="\##(colour)"/>"##)
            switch trace.end {
            case .cancelled:
                parts.append(##"<path class="cancel" d="M\##(x(last.x - 6)),\##(y(last.y - 6)) l\##(n(12 * scale)),\##(n(12 * scale)) m0,\##(n(-12 * scale)) l\##(n(-12 * scale)),\##(n(12 * scale))" stroke="\##(colour)" stroke-width="2"/>"##)
            case .ended:
                parts.append(##"<circle class="lift" cx="\##(x(last.x))" cy="\##(y(last.y))" r="6" fill="white" stroke="\##(colour)" stroke-width="2"/>"##)
            default:
                break
            }
            parts.append("</g>")
        }
        for mark in marks {
            parts.append(##"<g class="gesture"><path d="M\##(x(mark.at.x)),\##(n(header + mark.at.y * scale - 5)) l5,5 l-5,5 l-5,-5 z" fill="black"/><text x="\##(n(margin + mark.at.x * scale + 8))" y="\##(n(header + mark.at.y * scale + 4))">\##(escape(mark.label))</text></g>"##)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    /// `text` safe inside an SVG element or attribute. By scalar, so that a `<` before a
    /// combining mark is escaped too.
    private func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
