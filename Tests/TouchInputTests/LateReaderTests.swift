import Foundation
import Testing
import TouchModel
@testable import TouchInput

/// A live device's reader can fall behind (a busy machine): it then reads many events at
/// once, long after their stamps. What the filters decide must not depend on that: a deadline
/// that fell between two events (a held-back contact proved a finger by lasting, a palm's
/// verdict, a stuck contact) is decided before the later event, as the replay decides it.
@Suite("A reader that falls behind")
struct LateReaderTests {
    /// Every event of `recording` fed at once, as a device's read that found them all waiting
    /// feeds them (``TouchDevice/read(into:events:resynced:)``): what was due before each
    /// event expired first, then the rest at the end. The frames and the filters' counts.
    static func readLate(_ recording: EvemuRecording, filters: ContactFilterSettings) throws -> ([TouchFrame], ContactFilters.Counts) {
        let device = try #require(recording.device)
        var assembler = TouchFrameAssembler(description: device, mapping: OutputMapping(), filters: filters)
        var frames: [TouchFrame] = []
        for event in recording.events {
            while let (expired, _) = assembler.expireDue(before: event.time) {
                if let expired { frames.append(expired) }
            }
            if let frame = assembler.consume(event) { frames.append(frame) }
        }
        while let (expired, _) = assembler.expireDue(before: .infinity) {
            if let expired { frames.append(expired) }
        }
        return (frames, assembler.filterCounts)
    }

    static let phantoms = FixtureTests.repository.appendingPathComponent("Tests/Fixtures/phantoms")

    /// The generated phantom recordings whose filters wait (held-back contacts, storms, palms).
    static let waiting = ["busy-table.evemu", "busy-table-fast.evemu", "storm.evemu", "storm-drag-after.evemu", "ghosts.evemu",
                          "wake-burst.evemu", "corner-tap.evemu", "metronome-quick-taps.evemu"]

    @Test("a recording read all at once, long after it was stamped, gives the frames and counts its replay gives", arguments: waiting)
    func allAtOnce(name: String) throws {
        let recording = try EvemuRecording(parsing: String(contentsOf: Self.phantoms.appendingPathComponent(name), encoding: .utf8))
        let replay = try RecordingReplay(recording)
        let replayed = replay.replayedFrames()
        let (frames, counts) = try Self.readLate(recording, filters: ContactFilterSettings())
        #expect(counts == (replayed.last?.counts ?? ContactFilters.Counts()))
        #expect(frames.map(ContactFilterTests.phases) == replay.frames().map(ContactFilterTests.phases))
    }
}
