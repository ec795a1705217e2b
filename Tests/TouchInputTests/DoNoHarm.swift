import Foundation
import MotionCore
import TouchModel
@testable import TouchInput

/// What a replay comes to, for the do-no-harm test (``DoNoHarmTests``): the gestures a
/// full-screen recognizer set sees, and the values of a full-screen element that the fingers
/// drag, turn and pinch, as motiond's built-in scene has it.
struct ReplayOutcome {
    /// One step of a gesture: a run of events of one state and touch count, from its first.
    struct Step: Equatable, CustomStringConvertible {
        var state: RecognitionState
        var touches: Int
        var time: Double
        static func == (a: Step, b: Step) -> Bool { a.state == b.state && a.touches == b.touches }
        var description: String { "\(state.rawValue)(\(touches)) at \(String(format: "%.3f", time)) s" }
    }

    /// Each kind's steps, in order; a kind that never fired is absent.
    var gestures: [GestureKind: [Step]] = [:]
    /// Each of the element's number streams over time (`surface.position`, `.size`,
    /// `.rotation`, `.scale`): a point's x and y, a size's width and height, or the number.
    var streams: [String: [(time: Double, value: [Double])]] = [:]
    /// Each of its text streams (`surface.state`): the values, a repeat folded into the one before.
    var states: [String: [String]] = [:]

    /// The screen motiond maps a panel to without a configuration.
    static let screen = Size(width: 1920, height: 1080)

    /// The gestures and element values of `frames`.
    init(_ frames: [TouchFrame]) {
        gestures = Self.gestures(frames)
        let clock = ManualFrameClock(now: 0)
        let engine = MotionEngine(scene: Scene(size: Self.screen), clock: clock)
        let surface = Element(id: "surface", center: Point(x: Self.screen.width / 2, y: Self.screen.height / 2), size: Self.screen)
        engine.add(surface, interactions: [DirectlyManipulable(minimumSpan: engine.thresholds.minimumSpan.pixels)])
        for update in Simulation().run(frames, through: engine, clock: clock).updates where update.stream.hasPrefix("surface.") {
            record(update)
        }
    }

    /// Runs every kind of recognizer over the frames, waking the long press between frames
    /// as `motionctl gestures` does, and folds each kind's events into steps.
    private static func gestures(_ frames: [TouchFrame]) -> [GestureKind: [Step]] {
        var set = GestureSet(Set(GestureKind.allCases), screen: screen)
        var events: [RecognizedGesture] = []
        for frame in frames {
            if let deadline = set.nextDeadline, deadline < frame.time { set.advance(to: deadline, into: &events) }
            set.update(frame, into: &events)
        }
        var steps: [GestureKind: [Step]] = [:]
        for event in events {
            let step = Step(state: event.state, touches: event.touches, time: event.time)
            // A gesture that begins a frame later (a position held back by hysteresis) may
            // end without a change between: changes with the touches of the step before are
            // that step's.
            if let last = steps[event.kind]?.last, last == step || (step.state == .changed && last.state == .began && last.touches == step.touches) { continue }
            steps[event.kind, default: []].append(step)
        }
        return steps
    }

    private mutating func record(_ update: PublishedUpdate) {
        switch update.value {
        case .point(let p): streams[update.stream, default: []].append((update.time, [p.x, p.y]))
        case .size(let s): streams[update.stream, default: []].append((update.time, [s.width, s.height]))
        case .number(let n): streams[update.stream, default: []].append((update.time, [n]))
        case .text(let text): fold(update.stream, text)
        case .bool(let flag): fold(update.stream, flag ? "true" : "false")
        case .spring, .contacts: break
        }
    }

    private mutating func fold(_ stream: String, _ value: String) {
        if states[stream]?.last != value { states[stream, default: []].append(value) }
    }
}

/// How far two outcomes may differ and still be the same: what the default filters may
/// change of a finger they name no fault of.
///
/// Every filter but hysteresis either leaves a finger as it is or names what it did; a
/// contact held back until it proves itself begins a frame or two late. So the tolerance is
/// tight: 50 ms for a gesture's step or a value to come early or late, 4 px, 1°, 1%.
/// Hysteresis (on where the panel declares a fuzz) shows every finger up to half the fuzz
/// from where the panel put it, by design, and the element magnifies that: two fingers 57 px
/// apart on the Wacom DTH2242 recording, each up to 0.8 px off, turn it 1° and scale it 1.8%
/// differently, which moves the centre of the full-screen element, 600 px from them, by
/// 18 px. On such a panel the tolerance is 3°, 3% and 24 px. A finger lost, gained or
/// misplaced is far beyond either: two crossing fingers whose x a filter exchanged leave the
/// element 116° from where it turned.
struct OutcomeTolerance {
    /// Seconds a gesture's step, or a value, may come early or late.
    var time = 0.05
    /// Pixels a position, or a size, may differ by.
    var pixels = 4.0
    /// Radians a rotation may differ by (1°).
    var radians = Double.pi / 180
    /// A scale's difference, as a fraction (1%).
    var scale = 0.01

    /// The tolerance for a panel: wider where the defaults' hysteresis is on.
    init(hysteresis: Bool = false) {
        guard hysteresis else { return }
        (pixels, radians, scale) = (24, 3 * Double.pi / 180, 0.03)
    }

    /// The tolerance of a stream's numbers, by what the stream is.
    func limit(for stream: String) -> Double {
        if stream.hasSuffix(".rotation") { return radians }
        if stream.hasSuffix(".scale") { return scale }
        return pixels
    }

    /// How `a` differs from `b`, one line each; empty when they are the same.
    func differences(_ a: ReplayOutcome, _ b: ReplayOutcome, names: (a: String, b: String)) -> [String] {
        var found: [String] = []
        for kind in GestureKind.allCases {
            let (x, y) = (a.gestures[kind] ?? [], b.gestures[kind] ?? [])
            if x != y {
                found.append("\(kind.rawValue): \(names.a) \(Self.summary(x)); \(names.b) \(Self.summary(y))")
            } else if let (p, q) = zip(x, y).first(where: { Swift.abs($0.time - $1.time) > time }) {
                found.append("\(kind.rawValue): \(p.state.rawValue) at \(Self.seconds(p.time)) (\(names.a)), \(Self.seconds(q.time)) (\(names.b))")
            }
        }
        for stream in Set(a.states.keys).union(b.states.keys).sorted() where a.states[stream] != b.states[stream] {
            found.append("\(stream): \(names.a) \(a.states[stream] ?? []), \(names.b) \(b.states[stream] ?? [])")
        }
        for stream in Set(a.streams.keys).union(b.streams.keys).sorted() {
            let (x, y) = (a.streams[stream] ?? [], b.streams[stream] ?? [])
            let limit = limit(for: stream)
            if Self.distance(x.last?.value ?? [], y.last?.value ?? []) > limit {
                found.append("\(stream) ends at \(Self.numbers(x.last?.value)) (\(names.a)), \(Self.numbers(y.last?.value)) (\(names.b))")
            } else if let worst = worstDeviation(x, y, limit: limit) {
                let (this, other) = worst.inFirst ? names : (names.b, names.a)
                found.append("\(stream): \(Self.numbers(worst.value)) at \(Self.seconds(worst.time)) \(this), \(Self.numbers(worst.other)) at best within \(Self.seconds(time)) of it \(other)")
            }
        }
        return found
    }

    /// The moment one stream is farthest from the other beyond `limit`, both ways: at each
    /// of its values, the other's values within ``time`` of it (and the one it held then)
    /// are looked at, and the nearest counts; nil when every value is within the limit.
    func worstDeviation(_ x: [(time: Double, value: [Double])], _ y: [(time: Double, value: [Double])], limit: Double) -> (time: Double, value: [Double], other: [Double]?, inFirst: Bool)? {
        var worst: (distance: Double, time: Double, value: [Double], other: [Double]?, inFirst: Bool)?
        for (from, to, inFirst) in [(x, y, true), (y, x, false)] {
            for sample in from {
                let near = Self.values(of: to, within: sample.time - time...sample.time + time)
                let nearest = near.min { Self.distance(sample.value, $0) < Self.distance(sample.value, $1) }
                let distance = nearest.map { Self.distance(sample.value, $0) } ?? .infinity
                if distance > limit && distance > (worst?.distance ?? 0) { worst = (distance, sample.time, sample.value, nearest, inFirst) }
            }
        }
        return worst.map { ($0.time, $0.value, $0.other, $0.inFirst) }
    }

    /// The values a stream held within `window`: the one it held at its start, and every one
    /// published in it.
    static func values(of stream: [(time: Double, value: [Double])], within window: ClosedRange<Double>) -> [[Double]] {
        var held: [Double]?
        var found: [[Double]] = []
        for sample in stream {
            if sample.time <= window.lowerBound { held = sample.value; continue }
            if sample.time > window.upperBound { break }
            found.append(sample.value)
        }
        return (held.map { [$0] } ?? []) + found
    }

    static func distance(_ a: [Double], _ b: [Double]) -> Double {
        guard a.count == b.count else { return .infinity }
        return zip(a, b).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
    }

    static func seconds(_ time: Double) -> String { String(format: "%.3f s", time) }
    static func numbers(_ values: [Double]?) -> String {
        guard let values else { return "nothing" }
        return "(" + values.map { String(format: "%.3f", $0) }.joined(separator: ", ") + ")"
    }

    /// A kind's steps, short: the states and touch counts in order, the first few times.
    static func summary(_ steps: [ReplayOutcome.Step]) -> String {
        steps.isEmpty ? "none" : steps.prefix(12).map(\.description).joined(separator: ", ") + (steps.count > 12 ? ", … (\(steps.count) steps)" : "")
    }
}
