import Foundation
import MotionCore
import Testing
@testable import TouchInput

/// An infrared frame's rules against real fingers that look like its faults: fingers that
/// cross while they turn (not a flip), and fingers that rest or tap at the corners of the
/// rectangle two others span (not ghosts). On ``PhantomTouchTests/infraredPanel()``
/// (0…4095 at 10 units/mm, a frame every 10 ms).
@Suite("Infrared frames")
struct InfraredFrameTests {
    typealias Replayed = PhantomTouchTests.Replayed

    /// Two fingers 60 mm apart turning around (2000, 2000) from `from` through `degrees`
    /// (negative: clockwise in device units) at `degreesPerSecond`, from the frame they land
    /// in to a stop, where they rest three frames; each frame's true places.
    static func turn(from: Double, degrees: Double, degreesPerSecond: Double) -> (EventScript, [(Double, [Int32: (Double, Double)])]) {
        var script = EventScript()
        var truth: [(Double, [Int32: (Double, Double)])] = []
        let frames = Int((abs(degrees) / degreesPerSecond / 0.01).rounded())
        for n in 0...frames + 3 {
            let angle = (from + degrees * Double(min(n, frames)) / Double(frames)) * .pi / 180
            let a = (2000 + 300 * cos(angle), 2000 + 300 * sin(angle)), b = (2000 - 300 * cos(angle), 2000 - 300 * sin(angle))
            truth.append((script.time, [1: a, 2: b]))
            script.slot(0); if n == 0 { script.track(1) }; script.at(Int32(a.0.rounded()), Int32(a.1.rounded()))
            script.slot(1); if n == 0 { script.track(2) }; script.at(Int32(b.0.rounded()), Int32(b.1.rounded()))
            script.report(after: 0.01)
        }
        script.slot(0); script.track(-1); script.slot(1); script.track(-1); script.report()
        return (script, truth)
    }

    /// The farthest any reported contact is from its finger's true place, in units.
    static func farthest(_ replayed: Replayed, from truth: [(Double, [Int32: (Double, Double)])]) -> Double {
        var farthest = 0.0
        for frame in replayed.compactMap(\.frame) {
            guard let (_, places) = truth.first(where: { abs($0.0 - frame.time) < 1e-9 }) else { continue }
            for contact in frame.contacts where contact.phase != .ended {
                guard let place = places[contact.trackingID] else { return .infinity }
                farthest = max(farthest, hypot(Double(contact.deviceX) - place.0, Double(contact.deviceY) - place.1))
            }
        }
        return farthest
    }

    @Test("two fingers turning around each other cross on x and on y, slowly and fast, either way, stopping or landing at the crossing: no flip, each finger where it is",
          arguments: [(30.0, 180.0, 90.0), (30.0, 180.0, 720.0), (210.0, -180.0, 90.0), (210.0, -180.0, 720.0), (-20.0, 116.0, 400.0),
                      // stopping 3° short of the crossing, and landing 4° short of it already turning
                      (27.0, 60.0, 720.0), (-57.0, 54.0, 720.0), (86.0, 120.0, 720.0), (4.0, -120.0, 720.0)])
    func turningPairs(from: Double, degrees: Double, speed: Double) throws {
        let (script, truth) = Self.turn(from: from, degrees: degrees, degreesPerSecond: speed)
        let replayed = try PhantomTouchTests.replay(script, on: PhantomTouchTests.infraredPanel())
        let counts = PhantomTouchTests.counts(replayed)
        #expect(counts.flips == 0 && counts.jumps == 0, "\(counts)")
        let lives = PhantomTouchTests.lives(replayed)
        #expect(lives.keys.sorted() == [1, 2] && lives.values.allSatisfy { $0.first == .began && $0.last == .ended }, "\(lives)")
        // The hysteresis margin lets a shown place lag a little: well under the fingers' 60 mm.
        #expect(Self.farthest(replayed, from: truth) < 15, "\(Self.farthest(replayed, from: truth)) units from a finger")
    }

    @Test("a frame that goes on reporting two resting fingers at their ghost corners is put back for 50 ms, then believed")
    func putBackEnds() throws {
        var script = EventScript()
        for n in 0..<40 {
            let flipped = (10..<30).contains(n)
            let wobble = Int32(n % 2)
            script.slot(0); if n == 0 { script.track(1) }; script.at(1000 + wobble, flipped ? 3000 : 1000)
            script.slot(1); if n == 0 { script.track(2) }; script.at(3000 - wobble, flipped ? 1000 : 3000)
            script.report(after: 0.01)
        }
        script.slot(0); script.track(-1); script.slot(1); script.track(-1); script.report()
        let replayed = try PhantomTouchTests.replay(script, on: PhantomTouchTests.infraredPanel())
        // Put back at 0.10…0.14 (five frames in 50 ms, six where the clock rounds), believed
        // from then; its end at 0.30 is a flip back from where they were believed, put back as long.
        #expect((10...12).contains(PhantomTouchTests.counts(replayed).flips), "\(PhantomTouchTests.counts(replayed))")
        let believed = try #require(replayed.compactMap(\.frame).first { abs($0.time - 0.2) < 1e-9 })
        #expect(believed.contacts.map(\.deviceY) == [3000, 1000], "\(believed.contacts)")
    }

    /// Two fingers resting at (1000, 1000) and (3000, 3000) from 0 to 0.5 s (a unit of
    /// wobble a frame), with `more`: (id, lands, lifts, x, y) each, landing in the same
    /// frame when their times agree.
    static func corners(_ more: [(Int32, Double, Double, Int32, Int32)], first: Double = 0, second: Double = 0) -> EventScript {
        var script = EventScript()
        var fingers: [(Int32, Double, Double, Int32, Int32)] = [(1, first, 0.5, 1000, 1000), (2, second, 0.5, 3000, 3000)]
        fingers += more
        for n in 0...60 {
            let time = Double(n) * 0.01
            for (slot, (id, lands, lifts, x, y)) in fingers.enumerated() where time > lands - 1e-9 && time < lifts + 0.005 {
                script.slot(Int32(slot))
                if abs(time - lands) < 1e-9 { script.track(id) }
                if abs(time - lifts) < 0.005 { script.track(-1) } else { script.at(x + Int32(n % 2), y) }
            }
            script.report(after: 0.01)
        }
        return script
    }

    /// Real fingers at the corners of two fingers resting: `more` are (id, lands, lifts, x, y).
    struct CornerShape: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var more: [(Int32, Double, Double, Int32, Int32)]
        var second = 0.0
    }

    static let cornerShapes = [
        CornerShape(testDescription: "third and fourth at the corners 50 ms apart", more: [(3, 0.1, 0.5, 1010, 2990), (4, 0.15, 0.5, 2990, 1010)]),
        CornerShape(testDescription: "one finger, then three at once", more: [(3, 0.1, 0.5, 1000, 3000), (4, 0.1, 0.5, 3000, 1000)], second: 0.1),
        CornerShape(testDescription: "a third finger tapping 1.4 mm from a corner for 100 ms", more: [(3, 0.1, 0.2, 1014, 3000)]),
    ]

    @Test("fingers resting or tapping at the ghost corners of two fingers are reported within 60 ms of landing, and none is a ghost",
          arguments: cornerShapes)
    func fingersAtCorners(shape: CornerShape) throws {
        let more = shape.more
        let replayed = try PhantomTouchTests.replay(Self.corners(more, second: shape.second), on: PhantomTouchTests.infraredPanel())
        let lives = PhantomTouchTests.lives(replayed)
        #expect(lives.keys.sorted() == [1, 2] + more.map(\.0), "\(lives)")
        #expect(lives.values.allSatisfy { $0.first == .began && $0.last == .ended }, "\(lives)")
        let beginnings = PhantomTouchTests.beginnings(replayed)
        for (id, lands, _, _, _) in more {
            let began = try #require(beginnings[id])
            #expect(began >= lands - 1e-9 && began <= lands + 0.06 + 1e-9, "\(id) lands at \(lands), begins at \(began)")
        }
        #expect(PhantomTouchTests.counts(replayed).ghosts == 0)
    }

    @Test("ghosts landing with the second finger that move with their corners stay ghosts past 60 ms")
    func ghostsFollowTheirCorners() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(1000, 1000); script.report(after: 0.01)
        script.slot(1); script.track(2); script.at(3000, 3000)
        script.slot(2); script.track(3); script.at(1000, 3000)
        script.slot(3); script.track(4); script.at(3000, 1000); script.report(after: 0.01)
        for step in 1...15 {
            let d = Int32(step) * 5  // 50 mm/s: both fingers drag, and both corners with them
            script.slot(0); script.at(1000 + d, 1000 + d); script.slot(1); script.at(3000 + d, 3000 - d)
            script.slot(2); script.at(1000 + d, 3000 - d); script.slot(3); script.at(3000 + d, 1000 + d)
            script.report(after: 0.01)
        }
        for slot: Int32 in 0...3 { script.slot(slot); script.track(-1) }
        script.report()
        let replayed = try PhantomTouchTests.replay(script, on: PhantomTouchTests.infraredPanel())
        #expect(PhantomTouchTests.lives(replayed).keys.sorted() == [1, 2], "\(PhantomTouchTests.lives(replayed))")
        #expect(PhantomTouchTests.counts(replayed).ghosts == 2)
    }
}
