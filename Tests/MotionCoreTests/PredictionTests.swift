import Testing
@testable import MotionCore

/// The predictors on exact cases (docs/prediction.md): what each must get right, and what
/// the default must never do.
@Suite("Touch prediction")
struct PredictionTests {
    /// A finger at `velocity` (px/s) from `start`, sampled every `interval` seconds.
    static func line(from start: Point = Point(x: 100, y: 500), velocity: Point, count: Int, interval: Double = 0.008,
                     startTime: Double = 10) -> [PredictionEvaluation.Sample] {
        (0..<count).map { index in
            let t = Double(index) * interval
            return .init(time: startTime + t, position: Point(x: start.x + velocity.x * t, y: start.y + velocity.y * t))
        }
    }

    static func feed<P: TouchPredictor>(_ type: P.Type, _ samples: [PredictionEvaluation.Sample]) -> P {
        var predictor = P()
        for sample in samples { predictor.add(sample.position, at: sample.time) }
        return predictor
    }

    static func distance(_ a: Point, _ b: Point) -> Double { ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot() }

    @Test("a finger at a constant velocity is predicted where it will be by every predictor but none",
          arguments: PredictorKind.allCases)
    func constantVelocity(kind: PredictorKind) {
        let velocity = Point(x: 640, y: -250)
        let samples = Self.line(velocity: velocity, count: 120)
        let horizon = 0.016
        let last = samples[samples.count - 1]
        let truth = Point(x: last.position.x + velocity.x * horizon, y: last.position.y + velocity.y * horizon)
        let predicted = kind.withType { type in Self.predicted(type, samples, horizon) }
        if kind == .none {
            // The lag: exactly the distance travelled in the horizon.
            #expect(abs(Self.distance(predicted, truth) - (velocity.x * velocity.x + velocity.y * velocity.y).squareRoot() * horizon) < 1e-9)
        } else {
            // The Kalman filter converges on the velocity rather than fitting it: close, not exact.
            #expect(Self.distance(predicted, truth) < (kind == .kalman ? 0.01 : 1e-6), "\(kind): \(predicted) against \(truth)")
        }
    }

    private static func predicted<P: TouchPredictor>(_ type: P.Type, _ samples: [PredictionEvaluation.Sample], _ horizon: Double) -> Point {
        feed(type, samples).predict(horizon)
    }

    @Test("at a stop the default overshoots at most the last velocity times the horizon, and not at all once a still sample came")
    func stop() {
        let velocity = Point(x: 800, y: 0)
        var samples = Self.line(velocity: velocity, count: 30)
        let stopped = samples[samples.count - 1]
        for index in 1...10 { samples.append(.init(time: stopped.time + Double(index) * 0.008, position: stopped.position)) }
        var predictor = DampedPredictor()
        var worst = 0.0
        for (index, sample) in samples.enumerated() {
            predictor.add(sample.position, at: sample.time)
            guard index >= 29 else { continue }
            let overshoot = predictor.predict(0.025).x - stopped.position.x
            worst = max(worst, overshoot)
            if index >= 30 { #expect(overshoot == 0, "sample \(index): \(overshoot) px past the stop") }
        }
        #expect(worst <= 800 * 0.025 + 1e-9)
        // The Kalman baseline, for comparison, is still off after a still sample: its
        // acceleration, braking hard, swings the prediction back behind the stop.
        let kalman = Self.feed(KalmanPredictor.self, Array(samples.prefix(31)))
        #expect(abs(kalman.predict(0.025).x - stopped.position.x) > 5)
    }

    @Test("after a reversal the default does not carry on the old way")
    func reversal() {
        var samples = Self.line(velocity: Point(x: 600, y: 0), count: 20)
        let turn = samples[samples.count - 1]
        samples += Self.line(from: turn.position, velocity: Point(x: -600, y: 0), count: 4, startTime: turn.time).dropFirst()
        let predictor = Self.feed(DampedPredictor.self, samples)
        #expect(predictor.predict(0.016).x <= samples[samples.count - 1].position.x)
    }

    @Test("a finger that jumps from rest (a contact settling) is not extrapolated; a held finger is predicted where it is")
    func jumpFromRest() {
        var samples = (0..<10).map { PredictionEvaluation.Sample(time: 10 + Double($0) * 0.008, position: Point(x: 500, y: 300)) }
        #expect(Self.feed(DampedPredictor.self, samples).predict(0.016) == Point(x: 500, y: 300))
        samples.append(.init(time: 10.08, position: Point(x: 530, y: 300)))
        #expect(Self.distance(Self.feed(DampedPredictor.self, samples).predict(0.016), Point(x: 530, y: 300)) < 1e-6)
        // The Kalman baseline extrapolates the jump.
        #expect(Self.feed(KalmanPredictor.self, samples).predict(0.016).x > 530)
    }

    @Test("a gap of more than 40 ms starts afresh: the default waits for 4 new samples")
    func gap() {
        var samples = Self.line(velocity: Point(x: 600, y: 0), count: 20)
        let last = samples[samples.count - 1]
        samples += Self.line(from: Point(x: last.position.x + 100, y: 500), velocity: Point(x: 600, y: 0), count: 3, startTime: last.time + 0.2)
        let predictor = Self.feed(DampedPredictor.self, samples)
        #expect(predictor.predict(0.016) == samples[samples.count - 1].position)
    }

    @Test("a slow finger is not predicted (its noise would be magnified), a fast one fully")
    func speedDamping() {
        let slow = Self.feed(DampedPredictor.self, Self.line(velocity: Point(x: 20, y: 0), count: 20))
        #expect(slow.displacement(0.016) == Point(x: 0, y: 0))
        let fast = Self.feed(DampedPredictor.self, Self.line(velocity: Point(x: 400, y: 0), count: 20))
        #expect(abs(fast.displacement(0.016).x - 400 * 0.016) < 1e-6)
    }

    @Test("Chromium's Kalman predictor caps its horizon at 25 ms")
    func kalmanCap() {
        let predictor = Self.feed(KalmanPredictor.self, Self.line(velocity: Point(x: 600, y: 0), count: 120))
        let last = 100 + 600 * 0.008 * 119
        #expect(abs(predictor.predict(0.040).x - (last + 600 * 0.025)) < 0.01)
    }

    @Test("the evaluation: a contact holds still across a long gap, then moves during the last interval; none's error is the lag")
    func evaluation() {
        let track: [PredictionEvaluation.Sample] = [
            .init(time: 0, position: Point(x: 0, y: 0)), .init(time: 0.01, position: Point(x: 10, y: 0)),
            .init(time: 0.02, position: Point(x: 20, y: 0)), .init(time: 0.2, position: Point(x: 30, y: 0)),
        ]
        #expect(PredictionEvaluation.position(of: track, at: 0.015, interval: 0.01) == Point(x: 15, y: 0))
        #expect(PredictionEvaluation.position(of: track, at: 0.1, interval: 0.01) == Point(x: 20, y: 0))
        #expect(abs(PredictionEvaluation.position(of: track, at: 0.19, interval: 0.01)!.x - (20 + 10 * (0.19 - 0.185) / 0.015)) < 1e-9)
        #expect(PredictionEvaluation.position(of: track, at: 0.21, interval: 0.01) == nil)

        let moving = Self.line(velocity: Point(x: 500, y: 0), count: 50)
        let none = PredictionEvaluation.evaluate(.none, tracks: [moving], horizon: 0.016)
        #expect(abs(none.p95 - 8) < 1e-9 && abs(none.mean - 8) < 1e-9 && none.count == 48)
    }

    @Test("tracks are cut per contact from frames: landing to lift, a cancelled position left out")
    func tracks() {
        func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double) -> TouchContact {
            TouchContact(slot: Int(id), trackingID: id, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: x, y: 0))
        }
        let frames = [
            TouchFrame(time: 1, contacts: [contact(1, .began, 0)]),
            TouchFrame(time: 1.01, contacts: [contact(1, .moved, 1), contact(2, .began, 50)]),
            TouchFrame(time: 1.02, contacts: [contact(1, .ended, 2), contact(2, .moved, 51)]),
            TouchFrame(time: 1.03, contacts: [contact(2, .cancelled, 999)]),
            TouchFrame(time: 1.04, contacts: [contact(1, .began, 5)]),
            TouchFrame(time: 1.05, contacts: [contact(1, .moved, 6)]),
        ]
        let tracks = PredictionEvaluation.tracks(frames)
        #expect(tracks.map { $0.map(\.position.x) } == [[0, 1, 2], [50, 51], [5, 6]])
    }
}
