import Testing
@testable import MotionCore

@Suite("ReactiveProperty and MotionObservable")
struct StreamTests {
    @Test("subscribing emits the current value at once, then every write in order")
    func propertyEmitsCurrentThenWrites() {
        let property = ReactiveProperty(1)
        var first: [Int] = [], second: [Int] = []
        var order: [String] = []
        property.subscribe { first.append($0); order.append("first") }
        property.value = 2
        property.subscribe { second.append($0); order.append("second") }
        property.value = 3
        property.value = 3
        #expect(first == [1, 2, 3, 3])
        #expect(second == [2, 3, 3])
        #expect(order == ["first", "first", "second", "first", "second", "first", "second"])
    }

    @Test("unsubscribing stops notifications, even from inside a notification")
    func unsubscribeDuringNotification() {
        let property = ReactiveProperty(0)
        var received: [Int] = []
        var later: Subscription!
        let first = property.subscribe { value in
            if value == 1 { later.unsubscribe() }
        }
        later = property.subscribe { received.append($0) }
        property.value = 1
        property.value = 2
        #expect(received == [0])
        first.unsubscribe()
        #expect(property.subscriberCount == 0)
        #expect(first.isUnsubscribed)
    }

    @Test("a read-only view follows the property")
    func readOnly() {
        let property = ReactiveProperty("a")
        let view = property.readOnly
        var seen: [String] = []
        view.subscribe { seen.append($0) }
        property.value = "b"
        #expect(view.value == "b")
        #expect(seen == ["a", "b"])
    }

    @Test("a stream delivers nothing after unsubscribe and each subscription connects anew")
    func coldStream() {
        var connections = 0
        var emit: ((Int) -> Void)?
        let stream = MotionObservable<Int> { observer in
            connections += 1
            emit = observer.next
            return { emit = nil }
        }
        var values: [Int] = []
        let subscription = stream.subscribe(next: { values.append($0) })
        emit?(1)
        let leaked = emit
        subscription.unsubscribe()
        leaked?(2)  // a source that still holds the observer is ignored after unsubscribe
        #expect(values == [1])
        stream.subscribe(next: { _ in })
        #expect(connections == 2)
    }

    @Test("states pass through operators")
    func statesPassThrough() {
        let stream = MotionObservable<Int> { observer in
            observer.state(.active)
            observer.next(1)
            observer.state(.atRest)
            return {}
        }
        var log: [String] = []
        stream.map { $0 * 10 }.filter { $0 > 0 }.subscribe(next: { log.append("\($0)") }, state: { log.append($0.rawValue) })
        #expect(log == ["active", "10", "atRest"])
    }
}

@Suite("Value operators")
struct ValueOperatorTests {
    func collect<T>(_ stream: MotionObservable<T>) -> [T] {
        var out: [T] = []
        stream.subscribe(next: { out.append($0) })
        return out
    }

    @Test func mapFilterDedupe() {
        #expect(collect(MotionObservable.of(1, 2, 3, 4).map { $0 * 2 }) == [2, 4, 6, 8])
        #expect(collect(MotionObservable.of(1, 2, 3, 4).filter { $0 % 2 == 0 }) == [2, 4])
        #expect(collect(MotionObservable.of(1, 1, 2, 2, 1, 3, 3).dedupe()) == [1, 2, 1, 3])
    }

    @Test("dedupe keeps its memory per subscription")
    func dedupePerSubscription() {
        let deduped = MotionObservable.of(5, 5).dedupe()
        #expect(collect(deduped) == [5])
        #expect(collect(deduped) == [5])
    }

    @Test("bounds clamp from one side")
    func bounds() {
        #expect(collect(MotionObservable.of(-5.0, 0.5, 7.0).upperBound(1)) == [-5, 0.5, 1])
        #expect(collect(MotionObservable.of(-5.0, 0.5, 7.0).lowerBound(0)) == [0, 0.5, 7])
    }

    @Test("threshold and thresholdRange count their bounds as within")
    func thresholds() {
        #expect(collect(MotionObservable.of(0.9, 1.0, 1.1).threshold(1)) == [.below, .within, .above])
        #expect(collect(MotionObservable.of(-1.0, 0, 5, 10, 10.001).thresholdRange(min: 0, max: 10))
            == [.below, .within, .within, .within, .above])
    }

    @Test("rubber band reference values for bounds [0, 100] and max length 48")
    func rubberBandReference() {
        let expected: [(Double, Double)] = [
            (110, 104.934579), (148, 117.032258), (200, 125.631068), (1000, 143.756906), (-10, -4.934579),
        ]
        let banded = collect(MotionObservable.of(110.0, 148, 200, 1000, -10).rubberBanded(below: 0, above: 100, maxLength: 48))
        for (value, (input, reference)) in zip(banded, expected) {
            #expect(Swift.abs(value - reference) < 1e-6, "band(\(input)) = \(value)")
        }
        #expect(collect(MotionObservable.of(0.0, 50, 100).rubberBanded(below: 0, above: 100)) == [0, 50, 100])
    }

    @Test("rubber-banded points resist on each axis on its own")
    func rubberBandPoints() {
        let rect = Rect(x: 0, y: 0, width: 100, height: 100)
        let point = collect(MotionObservable.of(Point(x: 110, y: 50)).rubberBanded(outsideOf: rect, maxLength: 48))[0]
        #expect(Swift.abs(point.x - 104.934579) < 1e-6)
        #expect(point.y == 50)
        #expect(rubberBand(-10, min: 0, max: 100, maxLength: 0) == 0, "a zero max length pins the value to the bound")
    }
}

/// A gesture event for the operator tests; the recognizers of issue 4 emit their own.
struct FakeGesture: TranslationGestureEvent, RotationGestureEvent, ScaleGestureEvent {
    var state: RecognitionState
    var translation = Point.zero
    var translationVelocity = Point.zero
    var rotation = 0.0
    var rotationVelocity = 0.0
    var scale = 1.0
    var scaleVelocity = 0.0
}

@Suite("Gesture operators")
struct GestureOperatorTests {
    /// A gesture stream driven by hand.
    final class Gesture {
        private var observers: [MotionObserver<FakeGesture>] = []
        var stream: MotionObservable<FakeGesture> {
            MotionObservable { observer in
                self.observers.append(observer)
                return {}
            }
        }
        func send(_ event: FakeGesture) { observers.forEach { $0.next(event) } }
    }

    @Test("translated(from:) adds the translation to the position cached at .began")
    func translated() {
        let gesture = Gesture()
        let position = ReactiveProperty(Point(x: 100, y: 200))
        var out: [Point] = []
        gesture.stream.translated(from: position).subscribe(next: { value in
            out.append(value)
            position.value = value  // as the runtime would: the start must stay cached
        })
        gesture.send(FakeGesture(state: .began))
        gesture.send(FakeGesture(state: .changed, translation: Point(x: 10, y: -5)))
        gesture.send(FakeGesture(state: .changed, translation: Point(x: 30, y: -15)))
        gesture.send(FakeGesture(state: .ended, translation: Point(x: 30, y: -15)))
        gesture.send(FakeGesture(state: .changed, translation: Point(x: 99, y: 99)))  // no .began: ignored
        gesture.send(FakeGesture(state: .began))
        gesture.send(FakeGesture(state: .changed, translation: Point(x: 1, y: 1)))
        #expect(out == [
            Point(x: 100, y: 200), Point(x: 110, y: 195), Point(x: 130, y: 185),
            Point(x: 130, y: 185),  // .ended: the final value, once
            Point(x: 130, y: 185), Point(x: 131, y: 186),
        ])
    }

    @Test("rotated(from:) adds and scaled(from:) multiplies")
    func rotatedAndScaled() {
        let gesture = Gesture()
        let rotation = ReactiveProperty(0.5)
        let scale = ReactiveProperty(2.0)
        var rotations: [Double] = [], scales: [Double] = []
        gesture.stream.rotated(from: rotation).subscribe(next: { rotations.append($0) })
        gesture.stream.scaled(from: scale).subscribe(next: { scales.append($0) })
        gesture.send(FakeGesture(state: .began))
        gesture.send(FakeGesture(state: .changed, rotation: 0.25, scale: 1.5))
        gesture.send(FakeGesture(state: .cancelled, rotation: 0.5, scale: 3))
        #expect(rotations == [0.5, 0.75], "a cancelled gesture emits nothing more")
        #expect(scales == [2, 3])
    }

    @Test("velocity() emits once, when the gesture ends")
    func velocity() {
        let gesture = Gesture()
        var velocities: [Point] = []
        gesture.stream.velocity().subscribe(next: { velocities.append($0) } as (Point) -> Void)
        gesture.send(FakeGesture(state: .began))
        gesture.send(FakeGesture(state: .changed, translationVelocity: Point(x: 5, y: 5)))
        gesture.send(FakeGesture(state: .ended, translationVelocity: Point(x: 400, y: -300)))
        gesture.send(FakeGesture(state: .cancelled, translationVelocity: Point(x: 1, y: 1)))
        #expect(velocities == [Point(x: 400, y: -300)])
    }

    @Test("whenRecognitionState(is:) keeps the listed states")
    func whenState() {
        let gesture = Gesture()
        var states: [RecognitionState] = []
        gesture.stream.whenRecognitionState(is: .began, .ended).subscribe(next: { states.append($0.state) })
        for state in [RecognitionState.possible, .began, .changed, .changed, .ended, .failed] {
            gesture.send(FakeGesture(state: state))
        }
        #expect(states == [.began, .ended])
    }
}

@Suite("An event stream holds subscriptions until its first value")
struct QuietEventStreamTests {
    @Test("subscriptions made before the first value receive it in the order they were made, through their operators; one cancelled meanwhile receives nothing")
    func heldInOrder() {
        let events = EventStream<Int>(state: { $0 == 0 ? .atRest : nil })
        var received: [String] = []
        let tracker = ActivityTracker()
        events.stream.map { $0 * 10 }.subscribe(next: { received.append("map \($0)") })
        let cancelled = events.stream.subscribe(next: { received.append("cancelled \($0)") })
        tracker.tracked(events.stream.filter { $0 > 0 }).subscribe(next: { received.append("tracked \($0)") },
                                                                  state: { received.append("tracked state \($0)") })
        // A stream of its own making (not an operator that says where its values come from)
        // connects at once, and so connects its upstream: still in the order subscribed.
        MotionObservable<Int> { observer in events.stream.subscribe(observer).unsubscribe }
            .subscribe(next: { received.append("custom \($0)") })
        events.stream.subscribe(next: { received.append("direct \($0)") })
        cancelled.unsubscribe()
        #expect(received.isEmpty)
        events.send(1)
        events.stream.subscribe(next: { received.append("late \($0)") })
        events.send(0)
        #expect(received == [
            "map 10", "tracked 1", "custom 1", "direct 1",
            "map 0", "custom 0", "direct 0", "late 0", "tracked state atRest",
        ])
    }
}
