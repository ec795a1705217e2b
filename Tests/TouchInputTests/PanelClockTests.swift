import Testing
import TouchInput

/// ``PanelClock``, on a fake clock: a panel's stamps put on motiond's, whatever they are.
@Suite("Panel clock")
struct PanelClockTests {
    /// Equal but for the rounding of the offset's arithmetic.
    static func near(_ a: Double, _ b: Double) -> Bool { Swift.abs(a - b) < 1e-9 }

    @Test("stamps on the clock keep their times, a frame read late included; the first frame of other stamps is put at now, and their differences kept")
    func offsets() {
        var same = PanelClock()
        #expect(Self.near(same.time(of: 9.99, readAt: 10), 9.99))
        #expect(Self.near(same.time(of: 10.2, readAt: 10.9), 10.2), "read 0.7 s late: the frame clock catches up to it")
        #expect(same.offset == 0 && same.rebases == 0)
        var ahead = PanelClock()
        #expect(Self.near(ahead.time(of: 1e6 + 10, readAt: 10.001), 10.001))
        #expect(Self.near(ahead.time(of: 1e6 + 10.008, readAt: 10.012), 10.009), "8 ms later by the panel")
        #expect(ahead.rebases == 0)
    }

    @Test("a frame never lands after now: the offset tightens to the least delay; a jump either way past a second re-bases, and is counted")
    func rebases() {
        var clock = PanelClock()
        _ = clock.time(of: 500, readAt: 10.05)  // read 50 ms after it happened
        #expect(Self.near(clock.time(of: 500.1, readAt: 10.11), 10.11), "read 10 ms after: the offset tightens by 40 ms")
        #expect(Self.near(clock.time(of: 500.2, readAt: 10.22), 10.21))
        #expect(clock.rebases == 0, "tightening is no re-base")
        #expect(Self.near(clock.time(of: 4100.2, readAt: 10.23), 10.23), "the wall clock set an hour forward")
        #expect(Self.near(clock.time(of: 500.3, readAt: 10.24), 10.24), "and back")
        #expect(clock.rebases == 2)
        #expect(Self.near(clock.time(of: .nan, readAt: 10.3), 10.3) && clock.time(of: .infinity, readAt: 10.4) == 10.4)
        #expect(Self.near(clock.time(of: 500.31, readAt: 10.5), 10.25), "a stamp that is no number leaves the offset alone")
        var extreme = PanelClock()
        #expect(extreme.time(of: -1e308, readAt: 1e308) == 1e308, "an offset past a double's range is none")
        #expect(extreme.offset == nil && extreme.time(of: 5, readAt: 10) == 10 && extreme.offset == 5)
    }
}
