import Foundation
import MotionCore
import Testing
import TouchModel
@testable import TouchInput

/// A filter that is on by default must do no harm: on a real recording, or on a near miss of
/// a fault (a real touch that looks like one), what the application sees with the default
/// filters is what it sees with every filter off. So every recording in the fixtures (real
/// ones in Tests/Fixtures/recordings at any depth, generated ones in Tests/Fixtures/phantoms,
/// found when the tests run) is replayed both ways, in process, and compared: the gestures
/// every recognizer sees (each kind's states in order, with their touch counts and times) and
/// the values of a full-screen element the fingers drag, turn and pinch (as motiond's
/// built-in scene has), within ``OutcomeTolerance``. On an infrared frame the filters off
/// include `infrared`, which the defaults turn on by the panel's name.
///
/// The defaults may differ only where they name the fault they removed (``NamedFaults``):
/// a filter that named something must be one whose count the recording declares, at that
/// count (expected.json for a phantom recording; a real recording declares none unless
/// ``declaredFaults`` says so), no contact it took away may be a finger the recording keeps,
/// and with the contacts it named as the defaults have them and every other as the device
/// sent it, the outcome must be the defaults'. A filter acting on a real finger is harm
/// however it names it.
@Suite("The default filters do no harm: gestures and element values as with every filter off")
struct DoNoHarmTests {
    static let fixtures = FixtureRecordings.directory.deletingLastPathComponent()
    static let phantoms = fixtures.appendingPathComponent("phantoms")

    /// Faults of recordings outside expected.json, by path from the fixtures folder: the
    /// counts their filters must come to.
    static let declaredFaults: [String: [String: Int]] = [
        // exchanging/generate.py: the frame exchanges the two fingers' positions for 0.3 s,
        // and back; each exchange re-pairs both.
        "recordings/exchanging/two-finger-pan.evemu": ["repaired": 4],
    ]

    /// Every recording under Tests/Fixtures/recordings and Tests/Fixtures/phantoms, by path
    /// from the fixtures folder.
    static func recordings() -> [String] {
        let phantomFiles = (try? FileManager.default.contentsOfDirectory(atPath: phantoms.path)) ?? []
        return FixtureRecordings.allRecordings().map { "recordings/" + $0 }
            + phantomFiles.filter { $0.hasSuffix(".evemu") }.sorted().map { "phantoms/" + $0 }
    }

    static func load(_ path: String) throws -> EvemuRecording {
        if path.hasPrefix("recordings/") { return try FixtureRecordings.replayable(String(path.dropFirst("recordings/".count))) }
        return try EvemuRecording(parsing: String(contentsOf: fixtures.appendingPathComponent(path), encoding: .utf8))
    }

    /// What the recording at `path` declares: a phantom recording's expected.json entry (its
    /// counts and the fingers it keeps), or ``declaredFaults``; nothing otherwise.
    static func declared(_ path: String) throws -> DeclaredFaults {
        if let counts = declaredFaults[path] { return DeclaredFaults(counts: counts) }
        guard path.hasPrefix("phantoms/") else { return DeclaredFaults() }
        let data = try Data(contentsOf: phantoms.appendingPathComponent("expected.json"))
        let all = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        guard let entry = all[String(path.dropFirst("phantoms/".count))] else { return DeclaredFaults() }
        let counts = try #require(entry["counts"] as? [String: Int])
        let fingers = try #require(entry["fingers"] as? [[String: Any]]).compactMap { ($0["id"] as? Int).map(Int32.init) }
        return DeclaredFaults(counts: counts, fingers: Set(fingers))
    }

    @Test("the recordings are found: the real ones at any depth, and the phantom recordings")
    func findsTheRecordings() {
        let found = Self.recordings()
        #expect(found.contains("recordings/" + FixtureRecordings.atmelTaps) && found.contains("recordings/" + FixtureRecordings.exchangingPan), "\(found)")
        #expect(found.contains("phantoms/four-finger-rectangle.evemu") && found.contains("phantoms/crossing-rotation.evemu"), "\(found)")
        for path in Self.declaredFaults.keys { #expect(found.contains(path), "\(path) is declared but not found") }
    }

    @Test("with the defaults, the gestures and element values are those with every filter off, but where a filter named the fault it removed",
          arguments: recordings())
    func doesNoHarm(_ path: String) throws {
        let recording = try Self.load(path)
        try #require(!recording.events.isEmpty, "\(path) holds no events")
        let screen = OutputMapping(outputSize: ReplayOutcome.screen)
        let raw = try RecordingReplay(recording, mapping: screen, filters: .off).frames()
        let withDefaults = try RecordingReplay(recording, mapping: screen, filters: ContactFilterSettings())
        let moments = withDefaults.replayedFrames()
        let filtered = moments.compactMap(\.frame)
        let tolerance = OutcomeTolerance(hysteresis: withDefaults.resolvedFilters.hysteresisMargin != nil)
        let defaults = ReplayOutcome(filtered)
        let differences = tolerance.differences(defaults, ReplayOutcome(raw), names: ("with the defaults", "with every filter off"))
        if differences.isEmpty { return }

        let named = NamedFaults(moments, raw: raw)
        let counts = moments.last?.counts ?? ContactFilters.Counts()
        let said = "\(path): the defaults changed what the application sees:\n" + differences.prefix(8).joined(separator: "\n")
        guard !named.isEmpty else {
            Issue.record("\(said)\nand named no fault: no filter said it acted on a contact")
            return
        }
        let undeclared = named.undeclared(try Self.declared(path), counts: counts)
        #expect(undeclared.isEmpty, "\(said)\nand what they named is no fault the recording holds:\n\(undeclared.joined(separator: "\n"))")
        let cleaned = ReplayOutcome(named.cleaned(raw: raw, filtered: filtered))
        let unnamed = tolerance.differences(defaults, cleaned, names: ("with the defaults", "with every filter off but for the named contacts, as the defaults have them"))
        #expect(unnamed.isEmpty, """
            \(said)
            and more than the \(named.contacts.count) contacts they named (\(named.filters.sorted().joined(separator: ", "))):
            \(unnamed.prefix(8).joined(separator: "\n"))
            """)
    }
}
