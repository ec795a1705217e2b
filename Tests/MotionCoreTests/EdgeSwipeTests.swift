import Foundation
import Testing
@testable import MotionCore

/// Edge swipes on synthetic fingers on a 1920×1080 screen: from each edge, and the near
/// misses (a slow drag from the edge, a landing too far in, sideways along it, two fingers).
@Suite("Edge swipe")
struct EdgeSwipeTests {
    static let screen = Size(width: 1920, height: 1080)

    static func edgeSwipes(_ fingers: [FingerScript.Finger], pixelsPerMillimetre: Double? = 4) -> [EdgeSwipeEvent] {
        var recognizer = EdgeSwipeRecognizer(screen: screen)
        let script = FingerScript(fingers: fingers, pixelsPerMillimetre: pixelsPerMillimetre.map { ($0, $0) })
        return script.frames(rate: 60).compactMap { recognizer.update($0) }
    }

    static func line(from: Point, by: Point, seconds: Double = 0.15) -> FingerScript.Finger {
        .line(id: 1, from: from, to: from + by, down: 1.0...(1.0 + seconds))
    }

    @Test("a finger landing 2.5 mm from an edge and swiping in 50 mm is an edge swipe from that edge", arguments: [
        (ScreenEdge.left, Point(x: 10, y: 500), Point(x: 200, y: 0)),
        (.right, Point(x: 1910, y: 500), Point(x: -200, y: 0)),
        (.top, Point(x: 900, y: 10), Point(x: 0, y: 200)),
        (.bottom, Point(x: 900, y: 1070), Point(x: 0, y: -200)),
    ])
    func fromEachEdge(edge: ScreenEdge, landing: Point, way: Point) throws {
        let events = Self.edgeSwipes([Self.line(from: landing, by: way)])
        let swipe = try #require(events.first)
        #expect(events.count == 1 && swipe.edge == edge && swipe.state == .recognized)
        // Recognized once the finger has come 20 mm (80 px), not at the lift.
        #expect(swipe.distance >= 80 && swipe.distance < 120 && swipe.time < 1.15, "\(swipe)")
        #expect(swipe.velocity.x * way.x + swipe.velocity.y * way.y > 0)
    }

    @Test("near misses: a slow drag from the edge, a landing 15 mm in, sideways along the edge, two fingers, a tap at the edge")
    func nearMisses() {
        #expect(Self.edgeSwipes([Self.line(from: Point(x: 10, y: 500), by: Point(x: 200, y: 0), seconds: 2)]).isEmpty, "slow")
        #expect(Self.edgeSwipes([Self.line(from: Point(x: 60, y: 500), by: Point(x: 200, y: 0))]).isEmpty, "15 mm in")
        #expect(Self.edgeSwipes([Self.line(from: Point(x: 10, y: 300), by: Point(x: 40, y: 300))]).isEmpty, "sideways")
        #expect(Self.edgeSwipes([Self.line(from: Point(x: 10, y: 500), by: Point(x: 200, y: 0)),
                                 .line(id: 2, from: Point(x: 10, y: 600), to: Point(x: 210, y: 600), down: 1.0...1.15)]).isEmpty, "two fingers")
        #expect(Self.edgeSwipes([FingerScript.Finger(id: 1, down: 1.0...1.1) { _ in Point(x: 5, y: 500) }]).isEmpty, "a tap")
    }

    @Test("frames that waited and were coalesced: the landing and then the lift far in are still an edge swipe")
    func coalesced() {
        var recognizer = EdgeSwipeRecognizer(screen: Self.screen)
        let script = FingerScript(fingers: [], pixelsPerMillimetre: (4, 4))
        #expect(recognizer.update(TouchFrame(time: 1, contacts: [script.contact(slot: 0, id: 1, phase: .began, at: Point(x: 8, y: 500))])) == nil)
        let lift = recognizer.update(TouchFrame(time: 1.14, contacts: [script.contact(slot: 0, id: 1, phase: .ended, at: Point(x: 300, y: 500))]))
        #expect(lift?.edge == .left && lift?.time == 1.14)
    }

    @Test("the band is millimetres at the panel's own scale, and pixels on a panel without resolution")
    func band() {
        let landing = Point(x: 40, y: 500)
        // 40 px is 4 mm at 10 px/mm (in the band), 10 mm at 4 px/mm (not).
        #expect(Self.edgeSwipes([Self.line(from: landing, by: Point(x: 400, y: 0))], pixelsPerMillimetre: 10).first?.edge == .left)
        #expect(Self.edgeSwipes([Self.line(from: landing, by: Point(x: 400, y: 0))], pixelsPerMillimetre: 4).isEmpty)
        // Without resolution: 20 px.
        #expect(Self.edgeSwipes([Self.line(from: Point(x: 15, y: 500), by: Point(x: 300, y: 0))], pixelsPerMillimetre: nil).first?.edge == .left)
        #expect(Self.edgeSwipes([Self.line(from: landing, by: Point(x: 300, y: 0))], pixelsPerMillimetre: nil).isEmpty)
    }
}
