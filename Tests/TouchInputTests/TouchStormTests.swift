import MotionCore
import Testing
@testable import TouchInput

/// The storm rule (``TouchStorm``) on the made-up panel of ``PhantomTouchTests`` (0…4095 at
/// 10 units/mm, 10 slots): a flood of short contacts is held back and quiets the panel for
/// as long as it lasts; however many fingers tap, their taps are kept.
@Suite("Touch storms")
struct TouchStormTests {
    /// One contact of a played script: lands in slot `slot` at `lands`, stays `duration`,
    /// moving `step` units in x a frame.
    struct Tap {
        var id: Int32
        var slot: Int32
        var lands: Double
        var x: Int32
        var y: Int32
        var duration: Double
        var step: Int32 = 0
    }

    /// The taps played as a panel reporting every `frame` s: each lands in the first frame
    /// at or after its time, is reported in every frame while down, and lifts in the first
    /// frame at or after its end (at least one frame after landing).
    static func play(_ taps: [Tap], frame: Double = 0.01) -> EventScript {
        var script = EventScript()
        func index(_ time: Double) -> Int { Int((time / frame - 1e-6).rounded(.up)) }
        let last = taps.map { Swift.max(index($0.lands) + 1, index($0.lands + $0.duration)) }.max() ?? 0
        for n in 0...last {
            script.time = Double(n) * frame
            var changed = false
            for tap in taps {
                let (lands, lifts) = (index(tap.lands), Swift.max(index(tap.lands) + 1, index(tap.lands + tap.duration)))
                guard (lands...lifts).contains(n) else { continue }
                changed = true
                script.slot(tap.slot)
                if n == lifts { script.track(-1); continue }
                if n == lands { script.track(tap.id) }
                script.at(tap.x + tap.step * Int32(n - lands), tap.y)
            }
            if changed { script.report(after: 0) }
        }
        return script
    }

    /// A flood: `rate` contacts a second from `from` for `duration` s, each down one frame
    /// (10 ms) at a place spread over the panel, ids from `firstID`, in slots 0–5.
    static func flood(rate: Double, from: Double, duration: Double, firstID: Int32 = 0) -> [Tap] {
        let count = Int(rate * duration)
        return (0..<count).map { (n: Int) -> Tap in
            let x: Int = 100 + n * 1931 % 3900, y: Int = 100 + n * 733 % 3900
            let lands: Double = from + Double(n) / rate
            return Tap(id: firstID + Int32(n), slot: Int32(n % 6), lands: lands, x: Int32(x), y: Int32(y), duration: 0.005)
        }
    }

    @Test("ten hands tapping six times a second each (60 new contacts a second, 100 ms taps, at places all over the table) keep every tap, at once")
    func busyTable() throws {
        let taps = (0..<180).map { (n: Int) -> Tap in
            let x: Int = 100 + n * 397 % 3800, y: Int = 100 + n * 211 % 3800
            return Tap(id: Int32(n), slot: Int32(n % 10), lands: Double(n) / 60, x: Int32(x), y: Int32(y), duration: 0.1)
        }
        let replayed = try PhantomTouchTests.replay(Self.play(taps))
        let lives = PhantomTouchTests.lives(replayed)
        let kept = taps.filter { lives[$0.id]?.first == .began && lives[$0.id]?.last == .ended }
        #expect(kept.count == 180, "\(180 - kept.count) of 180 taps lost")
        let began = PhantomTouchTests.beginnings(replayed)
        #expect(taps.allSatisfy { tap in began[tap.id].map { $0 - tap.lands < 0.011 } ?? false }, "a tap held back")
        #expect(PhantomTouchTests.counts(replayed).storms == 0)
    }

    @Test("a person hammering a button with 50 ms taps, ten a second, keeps every tap: a flood lands at places apart")
    func hammeringOnePlace() throws {
        let taps = (0..<30).map { (n: Int) -> Tap in
            Tap(id: Int32(n), slot: Int32(n % 2), lands: Double(n) / 10, x: 2000 + Int32(n % 3) * 10, y: 2000, duration: 0.05)
        }
        let lives = PhantomTouchTests.lives(try PhantomTouchTests.replay(Self.play(taps)))
        #expect(taps.filter { lives[$0.id]?.last == .ended }.count == 30, "\(lives)")
    }

    @Test("a flood of 200 one-frame contacts a second at places all over the panel: at most 10 are reported, the finger down is cancelled, one storm")
    func floodLeaksFew() throws {
        let finger = Tap(id: 900, slot: 9, lands: 0, x: 2000, y: 2000, duration: 3)
        let replayed = try PhantomTouchTests.replay(Self.play([finger] + Self.flood(rate: 200, from: 0.5, duration: 2)))
        let lives = PhantomTouchTests.lives(replayed)
        let leaked = lives.keys.filter { $0 < 900 }
        #expect(leaked.count <= 10, "\(leaked.count) of the flood's 400 contacts reported")
        #expect(lives[900]?.first == .began && lives[900]?.last == .cancelled, "\(lives[900] ?? [])")
        // Counted: the flood's contacts held back, and those reported and cancelled when the storm began, and the finger.
        let cancelled = leaked.filter { lives[$0]?.last == .cancelled }
        let counts = PhantomTouchTests.counts(replayed)
        #expect(counts.storms == 1 && counts.stormContacts == 400 - leaked.count + cancelled.count + 1, "\(counts)")
        var off = ContactFilterSettings()
        off.phantoms.stormContacts = 0
        #expect(PhantomTouchTests.lives(try PhantomTouchTests.replay(Self.play([finger] + Self.flood(rate: 200, from: 0.5, duration: 2)), filters: off)).count == 401)
    }

    @Test("the quiet ends 0.5 s after the flood: a finger landing in its last moments begins then, a drag 0.8 s after it is kept, and long taps hammered through it do not prolong it")
    func quietEndsWithTheFlood() throws {
        // The flood: 3 s from 0.5 s. Fingers hammer the panel through it and after it (150 ms taps, ten a second).
        let hammering = (0..<40).map { (n: Int) -> Tap in
            Tap(id: 500 + Int32(n), slot: 7 + Int32(n % 2), lands: 1 + Double(n) / 10, x: 3000, y: 600, duration: 0.15)
        }
        let late = Tap(id: 800, slot: 6, lands: 3.2, x: 1000, y: 3000, duration: 1.0)
        let drag = Tap(id: 801, slot: 6, lands: 4.3, x: 1000, y: 1000, duration: 0.3, step: 15)
        let replayed = try PhantomTouchTests.replay(Self.play(Self.flood(rate: 100, from: 0.5, duration: 3) + hammering + [late, drag]))
        let lives = PhantomTouchTests.lives(replayed)
        let began = PhantomTouchTests.beginnings(replayed)
        // The frames' times count from the first event, the flood's first contact at 0.5 s. Its last
        // contact lifts at 3.5 s: the quiet ends at 4.0 s, and what is down begins 70 ms later.
        let origin = 0.5
        #expect(lives[800]?.first == .began && lives[800]?.last == .ended, "\(lives[800] ?? [])")
        let lateBegan = try #require(began[800]) + origin
        #expect(lateBegan > 3.99 && lateBegan < 4.09, "\(lateBegan)")
        #expect(lives[801]?.first == .began && lives[801]?.last == .ended && abs((began[801] ?? 0) + origin - 4.3) < 1e-6, "\(lives[801] ?? [])")
        // Hammering after the quiet: every tap landing from 4.0 s on is kept.
        let after = hammering.filter { $0.lands >= 4.0 }
        #expect(!after.isEmpty && after.allSatisfy { lives[$0.id]?.last == .ended }, "\(after.map { lives[$0.id] ?? [] })")
        #expect(PhantomTouchTests.counts(replayed).storms == 1)
    }
}
