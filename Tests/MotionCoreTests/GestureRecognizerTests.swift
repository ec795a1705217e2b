import Foundation
import Testing
@testable import MotionCore

@Suite("Gesture recognizers on generated contacts")
struct GestureRecognizerTests {
    @Test("two fingers turning on a circle: rotation exact to 1e-9, scale 1, no translation")
    func rotationOnCircle() throws {
        let centre = Point(x: 500, y: 400)
        let turn = 1.2
        let script = FingerScript(fingers: [
            .circle(id: 1, centre: centre, radius: 150, from: 0, turn: turn, down: 0...1),
            .circle(id: 2, centre: centre, radius: 150, from: .pi, turn: turn, down: 0...1),
        ])
        let events = recognize(script.frames(rate: 120))
        let last = try #require(events.rotations.last)
        #expect(last.state == .ended)
        #expect(Swift.abs(last.rotation - turn) < 1e-9)
        #expect(events.rotations.first?.state == .began)
        let pinch = try #require(events.pinches.last)
        #expect(Swift.abs(pinch.scale - 1) < 1e-9)
        #expect(events.pinches.allSatisfy { $0.state != .began }, "no pinch")
        #expect(try #require(events.drags.last).translation.length < 1e-9)
    }

    @Test("rotation is clockwise-positive on screen and continuous past ±π", arguments: [2.5 * Double.pi, -2.5 * Double.pi])
    func continuousPastPi(turn: Double) throws {
        let script = FingerScript(fingers: [
            .circle(id: 1, centre: Point(x: 300, y: 300), radius: 100, from: 0.3, turn: turn, down: 0...2),
            .circle(id: 2, centre: Point(x: 300, y: 300), radius: 100, from: 0.3 + .pi, turn: turn, down: 0...2),
        ])
        let last = try #require(recognize(script.frames(rate: 60)).rotations.last)
        #expect(Swift.abs(last.rotation - turn) < 1e-9)
        // On screen, y grows downward: from angle 0 toward +y is clockwise.
        #expect(turn > 0 ? last.rotation > 0 : last.rotation < 0)
    }

    @Test("a 116° rotation in which the fingers swap sides")
    func rotationWithSwap() throws {
        // Finger 1 starts on the left and ends on the right, finger 2 the other way; at
        // some point their x order flips, which fools recognizers that sort fingers by x.
        let turn = 116 * Double.pi / 180
        let script = FingerScript(fingers: [
            .circle(id: 1, centre: Point(x: 400, y: 300), radius: 120, from: .pi, turn: turn, down: 0...0.8),
            .circle(id: 2, centre: Point(x: 400, y: 300), radius: 120, from: 0, turn: turn, down: 0...0.8),
        ])
        let frames = script.frames(rate: 90)
        let first = frames.first!.contacts, end = frames.last!.contacts
        #expect(first[0].position.x < first[1].position.x && end[0].position.x > end[1].position.x, "the fingers swapped sides")
        let last = try #require(recognize(frames).rotations.last)
        #expect(Swift.abs(last.rotation - turn) < 1e-9)
    }

    @Test("fingers spreading on lines: scale is the ratio of spans, exactly")
    func pinchOnLines() throws {
        let script = FingerScript(fingers: [
            .line(id: 1, from: Point(x: 400, y: 300), to: Point(x: 250, y: 150), down: 0...0.5),
            .line(id: 2, from: Point(x: 600, y: 500), to: Point(x: 750, y: 650), down: 0...0.5),
        ])
        let events = recognize(script.frames(rate: 100))
        let startSpan = Point(x: 100, y: 100).length, endSpan = Point(x: 250, y: 250).length
        let last = try #require(events.pinches.last)
        #expect(last.state == .ended)
        #expect(Swift.abs(last.scale - endSpan / startSpan) < 1e-9)
        #expect(events.pinches.first?.state == .began)
        #expect(Swift.abs(try #require(events.rotations.last).rotation) < 1e-9)
    }

    @Test("a pinch with fingers landing at different times re-bases without a jump")
    func pinchWithLateFingers() throws {
        // Three fingers spreading from one centre by the factor s(t) = 1 + 2t, landing at 0,
        // 0.2 and 0.4 s on the way: any set of them spreads by the same ratio, so the scale
        // from the second landing (when a pinch becomes possible) to the end is s(1)/s(0.2).
        let centre = Point(x: 500, y: 400)
        func finger(_ id: Int32, _ offset: Point, from start: Double) -> FingerScript.Finger {
            FingerScript.Finger(id: id, down: start...1.0) { t in centre + offset * (1 + 2 * t) }
        }
        let script = FingerScript(fingers: [
            finger(1, Point(x: -60, y: 10), from: 0),
            finger(2, Point(x: 70, y: -20), from: 0.2),
            finger(3, Point(x: 5, y: 80), from: 0.4),
        ])
        let events = recognize(script.frames(rate: 100))
        let last = try #require(events.pinches.last)
        #expect(last.state == .ended)
        #expect(Swift.abs(last.scale - 3.0 / 1.4) < 1e-9, "\(last.scale)")
        #expect(Swift.abs(try #require(events.rotations.last).rotation) < 1e-9)
        // No jump when the third finger lands: the scale keeps growing by a frame's worth.
        let scales = events.pinches.filter { $0.state == .changed }.map(\.scale)
        #expect(zip(scales.dropFirst(), scales).allSatisfy { $0 - $1 > 0 && $0 - $1 < 0.02 })
    }

    @Test("a two-finger translation: exact translation, no pinch, no rotation")
    func translation() throws {
        let offset = Point(x: -180, y: 95)
        let script = FingerScript(fingers: [
            .line(id: 1, from: Point(x: 300, y: 300), to: Point(x: 300, y: 300) + offset, down: 0...0.4),
            .line(id: 2, from: Point(x: 500, y: 350), to: Point(x: 500, y: 350) + offset, down: 0...0.4),
        ])
        let events = recognize(script.frames(rate: 120))
        let last = try #require(events.drags.last)
        #expect(last.state == .ended)
        #expect(last.translation.distance(to: offset) < 1e-9)
        #expect(events.pinches.allSatisfy { $0.state != .began } && events.rotations.allSatisfy { $0.state != .began })
    }

    @Test("a drag is re-based when a finger lands or lifts, so its translation never jumps")
    func dragRebase() throws {
        // One finger moves right 100 px; a second lands far away mid-way, both move down 50,
        // then the first lifts and the second moves down 50 more.
        let script = FingerScript(fingers: [
            FingerScript.Finger(id: 1, down: 0...0.6) { t in
                t <= 0.3 ? Point(x: 100 + 100 * t / 0.3, y: 100) : Point(x: 200, y: 100 + 50 * (t - 0.3) / 0.3)
            },
            FingerScript.Finger(id: 2, down: 0.3...0.9) { t in
                t <= 0.6 ? Point(x: 700, y: 500 + 50 * (t - 0.3) / 0.3) : Point(x: 700, y: 550 + 50 * (t - 0.6) / 0.3)
            },
        ])
        let drags = recognize(script.frames(rate: 100), [.drag]).drags
        let last = try #require(drags.last)
        #expect(last.state == .ended)
        #expect(last.translation.distance(to: Point(x: 100, y: 100)) < 1e-9)
        let steps = zip(drags.dropFirst(), drags).map { $0.translation.distance(to: $1.translation) }
        #expect(steps.allSatisfy { $0 < 6 }, "largest step \(steps.max() ?? 0)")
    }

    @Test("on a panel whose X and Y resolutions differ, a 45° path is 45°, and a physical circle rotates exactly")
    func anisotropic() throws {
        // 20 px/mm across, 10 px/mm down: raw pixels distort angles by a factor of two.
        let resolution = (x: 20.0, y: 10.0)
        func onPanel(_ mm: Point) -> Point { Point(x: mm.x * resolution.x, y: mm.y * resolution.y) }
        let turn = Double.pi / 4
        let script = FingerScript(fingers: [
            FingerScript.Finger(id: 1, down: 0...0.5) { t in onPanel(Point(x: 50 + 20 * cos(turn * t / 0.5), y: 50 + 20 * sin(turn * t / 0.5))) },
            FingerScript.Finger(id: 2, down: 0...0.5) { t in onPanel(Point(x: 50 - 20 * cos(turn * t / 0.5), y: 50 - 20 * sin(turn * t / 0.5))) },
        ], pixelsPerMillimetre: resolution)
        let events = recognize(script.frames(rate: 120))
        #expect(Swift.abs(try #require(events.rotations.last).rotation - turn) < 1e-9)
        #expect(Swift.abs(try #require(events.pinches.last).scale - 1) < 1e-9)

        // The same motion measured in pixels would not be 45°: the reason for millimetres.
        let pixels = FingerScript(fingers: script.fingers)
        let inPixels = try #require(recognize(pixels.frames(rate: 120)).rotations.last).rotation
        #expect(Swift.abs(inPixels - turn) > 0.05)
    }

    @Test("velocity: constant motion gives the same velocity at 60 and 250 Hz, at every update and at the end", arguments: [60.0, 250.0])
    func velocityIndependentOfRate(rate: Double) throws {
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 100, y: 700), to: Point(x: 700, y: 400), down: 0...0.6)])
        let drags = recognize(script.frames(rate: rate), [.drag]).drags
        let expected = Point(x: 1000, y: -500)
        // Once a full window of samples exists, the estimate is exact for straight motion.
        for event in drags where event.time >= 0.11 && (event.state == .changed || event.state == .ended) {
            #expect(event.translationVelocity.distance(to: expected) < 1e-6, "at \(event.time)")
        }
        #expect(drags.last?.state == .ended)
    }

    @Test("a finger held still for 100 ms before lifting tosses nothing; a lift frame repeating the position 8 ms later is not a stop")
    func stoppedFinger() throws {
        func fling(holdingFor hold: Double) -> DragEvent? {
            var frames = FingerScript(fingers: [.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 600, y: 100), down: 0...0.3)])
                .frames(rate: 125)
            // Replace the lift: the finger stays at its last position, then lifts `hold` later.
            let lift = frames.removeLast()
            var ended = lift
            ended.time = lift.time + hold
            ended.contacts[0].phase = .ended
            ended.contacts[0].position = frames.last!.contacts[0].position
            frames.append(ended)
            return recognize(frames, [.drag]).drags.last
        }
        let held = try #require(fling(holdingFor: 0.1))
        #expect(held.state == .ended && held.translationVelocity == .zero)
        let quick = try #require(fling(holdingFor: 0.008))
        #expect(quick.state == .ended)
        #expect(Swift.abs(quick.translationVelocity.x - 500 / 0.3) < 1e-6, "\(quick.translationVelocity)")
    }

    @Test("scale and rotation velocities are per second")
    func otherVelocities() throws {
        // Spreading at a constant rate of span, rotating at 2 rad/s.
        let script = FingerScript(fingers: [
            .circle(id: 1, centre: Point(x: 400, y: 400), radius: 100, from: 0, turn: 1, down: 0...0.5),
            .circle(id: 2, centre: Point(x: 400, y: 400), radius: 100, from: .pi, turn: 1, down: 0...0.5),
        ])
        let events = recognize(script.frames(rate: 200))
        let rotation = try #require(events.rotations.last { $0.state == .changed })
        #expect(Swift.abs(rotation.rotationVelocity - 2) < 1e-6)
        #expect(Swift.abs(try #require(events.pinches.last).scaleVelocity) < 1e-9)
    }

    @Test("taps: count multiple taps within the interval and distance; too far, too long or moving fails")
    func taps() throws {
        func tap(_ id: Int32, at point: Point, from start: Double, for duration: Double = 0.08, moving: Point = .zero) -> FingerScript.Finger {
            .line(id: id, from: point, to: point + moving, down: start...(start + duration))
        }
        let script = FingerScript(fingers: [
            tap(1, at: Point(x: 100, y: 100), from: 0),
            tap(2, at: Point(x: 110, y: 105), from: 0.25),       // double tap
            tap(3, at: Point(x: 105, y: 100), from: 0.5),        // triple
            tap(4, at: Point(x: 600, y: 100), from: 0.75),       // too far from the last: count 1
            tap(5, at: Point(x: 600, y: 100), from: 1.5),        // too late after the last: count 1
            tap(6, at: Point(x: 600, y: 100), from: 2.0, for: 0.5),                        // too long
            tap(7, at: Point(x: 600, y: 100), from: 3.0, moving: Point(x: 40, y: 0)),      // moved
        ])
        let taps = recognize(script.frames(rate: 100), [.tap]).taps
        #expect(taps.map(\.state) == [.recognized, .recognized, .recognized, .recognized, .recognized, .failed, .failed])
        #expect(taps.prefix(5).map(\.count) == [1, 2, 3, 1, 1])
        #expect(taps[0].location == Point(x: 100, y: 100))
    }

    @Test("a two-finger tap counts its fingers")
    func twoFingerTap() throws {
        let script = FingerScript(fingers: [
            .line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 100, y: 100), down: 0...0.1),
            .line(id: 2, from: Point(x: 200, y: 100), to: Point(x: 200, y: 100), down: 0.02...0.12),
        ])
        let tap = try #require(recognize(script.frames(rate: 100)).taps.last)
        #expect(tap.state == .recognized && tap.touches == 2 && tap.count == 1)
    }

    @Test("a tap that turns into a drag fails when the drag begins")
    func tapBecomesDrag() throws {
        let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 400, y: 100), down: 0...0.2)])
        let events = recognize(script.frames(rate: 100))
        let began = try #require(events.firstIndex { $0.kind == .drag && $0.state == .began })
        #expect(events[began + 1] == .tap(TapEvent(state: .failed, time: events[began + 1].tapTime, touches: 1, count: 0, location: Point(x: 100, y: 100))))
        #expect(events.taps.count == 1)
    }

    @Test("exclusive recognition: the first continuous gesture wins until the fingers lift")
    func exclusive() throws {
        // Spreading fast while drifting down: the pinch passes its threshold first and wins;
        // the drift later passes the drag's slop, but the drag stays blocked.
        let script = FingerScript(fingers: [
            .line(id: 1, from: Point(x: 400, y: 400), to: Point(x: 150, y: 460), down: 0...0.5),
            .line(id: 2, from: Point(x: 500, y: 400), to: Point(x: 750, y: 460), down: 0...0.5),
        ])
        let exclusive = recognize(script.frames(rate: 100), simultaneity: .exclusive)
        #expect(exclusive.pinches.first?.state == .began)
        #expect(!exclusive.drags.contains { $0.state == .began || $0.state == .changed })
        #expect(!exclusive.rotations.contains { $0.state == .began })
        let simultaneous = recognize(script.frames(rate: 100))
        #expect(simultaneous.drags.contains { $0.state == .began } && simultaneous.pinches.contains { $0.state == .began })
    }

    @Test("a cancelled contact cancels the gesture in progress")
    func cancelledContact() throws {
        var frames = FingerScript(fingers: [.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 400, y: 100), down: 0...0.3)]).frames(rate: 100)
        frames[frames.count - 1].contacts[0].phase = .cancelled
        let drags = recognize(frames, [.drag]).drags
        #expect(drags.last?.state == .cancelled)
        #expect(drags.last?.translationVelocity == .zero)
        // The next touch sequence starts afresh.
        let next = FingerScript(fingers: [.line(id: 2, from: Point(x: 0, y: 0), to: Point(x: 0, y: 100), down: 1...1.2)]).frames(rate: 100)
        var set = GestureSet([.drag])
        let events = (frames + next).flatMap { set.update($0) }.drags
        #expect(events.last?.state == .ended)
        #expect(events.last.map { $0.translation.distance(to: Point(x: 0, y: 100)) < 1e-9 } == true)
    }

    @Test("thresholds fall back to pixels on a device with no resolution, and use millimetres where known")
    func thresholdUnits() {
        // 12 px of travel: under the 16 px fallback; but on a 10 px/mm panel it is 1.2 mm, under 3 mm too,
        // while 40 px is 4 mm: a drag.
        func dragBegins(_ distance: Double, resolution: (Double, Double)?) -> Bool {
            let script = FingerScript(fingers: [.line(id: 1, from: Point(x: 100, y: 100), to: Point(x: 100 + distance, y: 100), down: 0...0.2)],
                                      pixelsPerMillimetre: resolution)
            return recognize(script.frames(rate: 100), [.drag]).drags.contains { $0.state == .began }
        }
        #expect(!dragBegins(12, resolution: nil))
        #expect(dragBegins(20, resolution: nil))
        #expect(!dragBegins(25, resolution: (10, 10)))
        #expect(dragBegins(40, resolution: (10, 10)))
    }
}

extension RecognizedGesture {
    var tapTime: Double { if case .tap(let e) = self { return e.time }; return -1 }
}
