import Testing
@testable import TouchInput

@Suite("Writing evemu recordings")
struct EvemuWriterTests {
    @Test("a written recording parses back into the same device and events, times from the first event", arguments: [
        FixtureRecordings.atmelDrag, FixtureRecordings.atmelFour, FixtureRecordings.ep0430, FixtureRecordings.pixel,
        FixtureRecordings.elan, FixtureRecordings.wacom,
    ])
    func roundTrip(name: String) throws {
        let original = try FixtureRecordings.recording(name)
        let written = EvemuWriter.text(original, comments: ["a comment"])
        let parsed = try EvemuRecording(parsing: written)
        #expect(parsed.device == original.device)
        #expect(parsed.events.count == original.events.count)
        for (a, b) in zip(parsed.events, original.events) {
            #expect(a.type == b.type && a.code == b.code && a.value == b.value)
            #expect(abs(a.time - (b.time - original.startTime)) < 0.000_000_5, "\(a.time) \(b.time)")
        }
    }

    @Test("times: six digits of microseconds, and nonsense offsets as zero")
    func times() {
        #expect(EvemuWriter.time(0) == "0.000000")
        #expect(EvemuWriter.time(1.5) == "1.500000")
        #expect(EvemuWriter.time(12.000_042) == "12.000042")
        #expect(EvemuWriter.time(-1) == "0.000000")
        #expect(EvemuWriter.time(.nan) == "0.000000")
        #expect(EvemuWriter.time(.infinity) == "0.000000")
    }
}
