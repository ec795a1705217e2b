import Foundation
import SeededRandom
import Testing

/// The generated phantom recordings (Tests/Fixtures/phantoms): each fault removed and each
/// near miss kept by the default filters, as expected.json says, through motionctl's replay;
/// a held-out set drawn from the suite's seed (MOTIOND_TEST_SEED); and what `motionctl sweep`
/// counts of them.
@Suite("Phantom recordings")
struct PhantomRecordingTests {
    static let folder = EndToEnd.repository.appendingPathComponent("Tests/Fixtures/phantoms")
    static let generator = folder.appendingPathComponent("generate.py").path
    static var motionctl: String { Run.productsDirectory.appendingPathComponent("motionctl").path }

    @Test("every phantom recording: its fault removed, its near miss kept, each finger begun and lifted, as expected.json says")
    func fixtures() throws {
        let run = try Run("/usr/bin/python3", [Self.generator, "--check", Self.folder.path, "--motionctl", Self.motionctl], absolute: true, deadline: 300)
        #expect(run.status == 0, "\(run.output)\n\(run.error)")
    }

    @Test("a held-out set, drawn from the suite's seed within each fault's definition, is judged the same way", .seeded)
    func heldOut() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = TestSeed.generator()
        // generate.py's seeds are 1 to 2³²-1.
        let seed = 1 + random.next() % UInt64(UInt32.max)
        let made = try Run("/usr/bin/python3", [Self.generator, "--held-out", String(seed), directory.path], absolute: true, deadline: 120)
        try #require(made.status == 0, "\(made.error)")
        let run = try Run("/usr/bin/python3", [Self.generator, "--check", directory.path, "--motionctl", Self.motionctl], absolute: true, deadline: 300)
        #expect(run.status == 0, "generate.py --held-out \(seed) DIR makes the set again:\n\(run.output)\n\(run.error)")
    }

    @Test("motionctl sweep over the phantom recordings counts each file's phantoms as expected.json does")
    func sweepCounts() throws {
        let data = try Data(contentsOf: Self.folder.appendingPathComponent("expected.json"))
        let expected = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        let run = try Run("motionctl", ["sweep", Self.folder.path, "--json"])
        #expect(run.status == 0, "\(run.error)")
        var seen = 0
        for line in try run.jsonLines().dropLast() {
            let path = try #require(line["path"] as? String)
            guard let expect = expected[URL(fileURLWithPath: path).lastPathComponent] else { continue }
            let device = try #require((line["devices"] as? [[String: Any]])?.first)
            let filtered = try #require(device["filtered"] as? [String: Int])
            let counts = try #require(expect["counts"] as? [String: Int])
            for (key, count) in counts { #expect(filtered[key] == count, "\(path): \(key) \(filtered[key] ?? -1), expected \(count)") }
            seen += 1
        }
        #expect(seen == expected.count, "sweep reported \(seen) of the \(expected.count) recordings")
        // The text output names the new counts too.
        let text = try Run("motionctl", ["sweep", Self.folder.path])
        #expect(text.lines.contains { $0.hasPrefix("    phantoms: dead zone 0, phantom taps 0, bursts 0, storms 1 (") }, "\(text.output)")
    }
}
