import Glibc
import Testing
@testable import MotionCore

/// The bound every prediction passes through (``PredictionBound``, docs/prediction.md,
/// Limits): what no predictor may do, however wild its input, and what it leaves alone.
@Suite("Touch prediction's bound")
struct PredictionBoundTests {
    static let screen = Rect(x: 0, y: 0, width: 1920, height: 1080)
    static let horizon = 0.016

    /// The screen's corners, top left, bottom right, top right, bottom left.
    static let cornerPoints = [Point(x: 0, y: 0), Point(x: 1919, y: 1079), Point(x: 1919, y: 0), Point(x: 0, y: 1079)]

    /// A contact jumping between the corners every millisecond, as a panel without
    /// resolution and without the jump filter reported it.
    static let corners: [PredictionEvaluation.Sample] = (0..<400).map { index in
        .init(time: 10 + 0.001 * Double(index), position: cornerPoints[index % 4])
    }

    @Test("a contact jumping between the corners every millisecond is predicted on the screen, at most 10 m/s (at 5 px/mm) times the horizon from its last sample, by every predictor",
          arguments: PredictorKind.allCases)
    func alternatingCorners(kind: PredictorKind) {
        let farthestRaw = kind.withType { type in
            Self.compare(type, Self.corners) { sample, bounded, _ in
                #expect(bounded.x >= 0 && bounded.x <= 1920 && bounded.y >= 0 && bounded.y <= 1080, "\(kind): \(bounded)")
                #expect(bounded.distance(to: sample) <= PredictionBound.maximumSpeedPixels * Self.horizon + 1e-9, "\(kind): \(bounded) from \(sample)")
            }
        }
        // What the bound is for: unbounded, every predictor but none throws it screens away.
        if kind != .none { #expect(farthestRaw > 5000, "\(kind): \(farthestRaw)") }
    }

    /// Feeds `samples` to predictor `type` within the bound and without, and hands `check`
    /// each sample's position and the two predictions `horizon` ahead (the bounded one on
    /// the screen); the farthest the unbounded one went from its sample.
    static func compare<P: TouchPredictor>(_ type: P.Type, _ samples: [PredictionEvaluation.Sample],
                                           _ check: (Point, Point, Point) -> Void) -> Double {
        var bounded = BoundedPredictor<P>()
        var raw = P()
        var farthest = 0.0
        for sample in samples {
            bounded.add(sample.position, at: sample.time)
            raw.add(sample.position, at: sample.time)
            let unbounded = raw.predict(horizon)
            check(sample.position, bounded.predict(horizon, within: screen), unbounded)
            farthest = max(farthest, unbounded.distance(to: sample.position))
        }
        return farthest
    }

    @Test("with millimetres the speed limit is 10 m/s in them: at 2 px/mm, 320 px in 16 ms")
    func millimetres() {
        var predictor = BoundedPredictor<LinearPredictor>()
        var farthest = 0.0
        for sample in Self.corners {
            predictor.add(sample.position, millimetres: Point(x: sample.position.x / 2, y: sample.position.y / 2), at: sample.time)
            // Off the screen, so that the screen does not stop it first.
            farthest = max(farthest, predictor.predict(Self.horizon).distance(to: sample.position))
        }
        #expect(abs(farthest - 10_000 * Self.horizon * 2) < 1e-9, "\(farthest)")
    }

    @Test("a finger speeding up is predicted at most 1.5 times as far as it covered in the last horizon; one at rest where it is")
    func reach() {
        // At rest for 48 ms, then 10 px in the last 8 ms: linear predicts 20 px on, 16 ms
        // ahead; it covered 10 px in the last 16 ms, so 15 px on.
        var predictor = BoundedPredictor<LinearPredictor>()
        for index in 0...6 { predictor.add(Point(x: 500, y: 500), at: 10 + 0.008 * Double(index)) }
        #expect(predictor.predict(Self.horizon) == Point(x: 500, y: 500))
        predictor.add(Point(x: 510, y: 500), at: 10.056)
        #expect(abs(predictor.predict(Self.horizon).x - 525) < 1e-9, "\(predictor.predict(Self.horizon))")
        // A finger down for 8 ms that covered 12 px, 10 of them in the last 4 ms: linear
        // predicts 40 px on; at its speed it covers 24 px in a horizon, so 36 px on.
        var young = BoundedPredictor<LinearPredictor>()
        young.add(Point(x: 500, y: 500), at: 10)
        young.add(Point(x: 502, y: 500), at: 10.004)
        young.add(Point(x: 512, y: 500), at: 10.008)
        #expect(abs(young.predict(Self.horizon).x - 548) < 1e-9, "\(young.predict(Self.horizon))")
    }

    @Test("a steady drag is left as the predictor predicts it: the bound changes nothing", arguments: PredictorKind.allCases)
    func steadyDrag(kind: PredictorKind) {
        _ = kind.withType { type in
            Self.compare(type, PredictionTests.line(velocity: Point(x: 640, y: -250), count: 60)) { _, bounded, unbounded in
                #expect(bounded.distance(to: unbounded) < 1e-9, "\(kind): \(bounded) against \(unbounded)")
            }
        }
    }

    @Test("a finger heading off the screen stops at its edge; one already off it is not taken further off")
    func screenEdge() {
        var near = BoundedPredictor<LinearPredictor>()
        for index in 0..<10 { near.add(Point(x: 1890 + 2 * Double(index), y: 540), at: 10 + 0.008 * Double(index)) }
        #expect(near.predict(0.05, within: Self.screen) == Point(x: 1920, y: 540))
        var off = BoundedPredictor<LinearPredictor>()
        for index in 0..<10 { off.add(Point(x: -40 - 2 * Double(index), y: 540), at: 10 + 0.008 * Double(index)) }
        #expect(off.predict(Self.horizon, within: Self.screen) == Point(x: -58, y: 540))
    }

    @Test("an element turns and spreads at most 1.5 times what its fingers did over the last horizon, however far the predicted moves would take it")
    func elementTurnAndSpread() throws {
        let element = Element(id: "photo", center: Point(x: 500, y: 500), size: Size(width: 400, height: 300))
        element.needs(.drag, .pinch, .rotate)
        let predicted = try #require(PredictedElement(element))
        // Two fingers 60 px apart that turned a little (B 3 px down) over the last horizon,
        // predicted to turn a lot (B 40 px down) and spread.
        let moves = [
            FingerMove(now: Point(x: 470, y: 500), then: Point(x: 470, y: 500), before: Point(x: 470, y: 500)),
            FingerMove(now: Point(x: 530, y: 500), then: Point(x: 545, y: 540), before: Point(x: 530, y: 497)),
        ]
        predicted.predict(element, moves: moves, minimumSpan: 20)
        let recent = try #require(DirectlyManipulable.step(ContactTracker.Motion.of(count: 2) { (moves[$0].before, moves[$0].now) }!, minimumSpan: 20))
        let unbounded = try #require(DirectlyManipulable.step(ContactTracker.Motion.of(count: 2) { (moves[$0].now, moves[$0].then) }!, minimumSpan: 20))
        let turn = try #require(predicted.rotation?.value), scale = try #require(predicted.scale?.value)
        #expect(abs(unbounded.rotation) > 3 * abs(recent.rotation) && unbounded.scale > 1.1, "the moves alone would turn and spread it far")
        #expect(abs(turn - 1.5 * recent.rotation) < 1e-12, "\(turn) against \(recent.rotation)")
        #expect(abs(log(scale)) <= 1.5 * abs(log(recent.scale)) + 1e-12, "\(scale) against \(recent.scale)")
    }
}
