import Foundation
import Testing

/// Same input, same output, byte for byte, across processes: what `simulate` promises, and
/// what the daemon's reports rely on.
///
/// Swift seeds its hashing once per process, at random unless SWIFT_DETERMINISTIC_HASHING is
/// set. Within one process two runs see Sets and Dictionaries in the same order, so a test that
/// runs the engine twice in the same process cannot see output that follows their order (the
/// order of names, or of the terms of a floating-point sum, whose last bits depend on it).
/// Here each run is a process of its own: one with the seed fixed at zero, the others with
/// random seeds, which differ from zero and from each other.
@Suite("The same output whatever the hash seed")
struct HashSeedTests {
    static let example = EndToEnd.repository.appendingPathComponent("config/motiond.toml").path

    static func recording(_ name: String) -> String {
        EndToEnd.recordings.appendingPathComponent(name + ".evemu").path
    }

    /// Runs motionctl with `arguments` with the hash seed fixed, then three times with random
    /// seeds; expects the same output every time, and returns it.
    static func sameOutput(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        var fixed = ProcessInfo.processInfo.environment
        fixed["SWIFT_DETERMINISTIC_HASHING"] = "1"
        var random = ProcessInfo.processInfo.environment
        random["SWIFT_DETERMINISTIC_HASHING"] = nil
        let reference = try Run("motionctl", arguments, environment: fixed)
        #expect(reference.status == 0, "\(reference.error)", sourceLocation: sourceLocation)
        for _ in 0..<3 {
            let run = try Run("motionctl", arguments, environment: random)
            #expect(run.status == 0, "\(run.error)", sourceLocation: sourceLocation)
            let first = zip(reference.lines, run.lines).first { $0 != $1 }
            #expect(run.output == reference.output,
                    "with another hash seed: \(first.map { "\($0.1)\ninstead of\n\($0.0)" } ?? "\(run.lines.count) lines instead of \(reference.lines.count)")",
                    sourceLocation: sourceLocation)
        }
        return reference.output
    }

    @Test("simulate: the example scene (a tossable with snap points, a directly manipulable photo, attract mode) on two fingers")
    func simulate() throws {
        let output = try Self.sameOutput(["simulate", "--config", Self.example, Self.recording("whot-evemu-devices__ep0430m09__2f-drag-scroll"),
                                          "--json", "--until", "200"])
        #expect(output.split(separator: "\n").count > 20, "\(output)")
    }

    @Test("gestures: every recognizer on three, four and up to ten fingers")
    func gestures() throws {
        let all = "drag,pinch,rotate,tap,long_press,swipe,edge_swipe"
        for name in ["whot-evemu-devices__atmel-maxtouch__4f-drag-down", "whot-evemu-devices__ep0430m09__4f-drag-down",
                     "whot-evemu-devices__wacom-dth2242-finger__up-to-10f"] {
            let output = try Self.sameOutput(["gestures", Self.recording(name), "--json", "--recognizers", all])
            #expect(output.contains(#""gesture":"pinch""#), "\(name): \(output.prefix(500))")
        }
    }
}
