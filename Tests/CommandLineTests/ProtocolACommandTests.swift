import Foundation
import Testing

/// Protocol A recordings through motionctl: the converted fixture against its protocol B
/// original, and a frame crowded beyond what libmtdev tracks, under `Run`'s deadline (libmtdev
/// loops forever on 32 contacts, so a missing cap hangs rather than fails).
@Suite("Protocol A recordings through motionctl")
struct ProtocolACommandTests {
    static let protocolA = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__ep0430m09__2f-drag-scroll.protocol-a.evemu").path
    static let protocolB = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu").path

    @Test("gestures on the protocol A recording are the gestures on the protocol B one")
    func sameGestures() throws {
        let a = try Run("motionctl", ["gestures", Self.protocolA, "--json"])
        let b = try Run("motionctl", ["gestures", Self.protocolB, "--json"])
        #expect(a.status == 0 && b.status == 0, "\(a.error)")
        let (linesA, linesB) = (try a.jsonLines(), try b.jsonLines())
        #expect(linesA.contains { $0["gesture"] as? String == "drag" && $0["state"] as? String == "began" }, "\(a.output)")
        #expect(a.output == b.output)
        #expect(linesA.count == linesB.count)
    }

    @Test("a frame of 40 contacts gives the first 31, in bounded time, and the recording goes on")
    func crowdedFrame() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let header = try String(contentsOfFile: Self.protocolA, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("E:") }.map(String.init)
        var events: [String] = []
        for frame in 0..<3 {
            let time = String(format: "%.6f", Double(frame) * 0.01)
            // Away from the axes' ends: contacts landing together there would be a burst.
            for contact in 0..<40 {
                events += ["E: \(time) 0003 0035 \(contact * 30 + frame + 50)", "E: \(time) 0003 0036 \(contact * 18 + 50)", "E: \(time) 0000 0002 0"]
            }
            events.append("E: \(time) 0000 0000 0")
        }
        events += ["E: 0.030000 0000 0002 0", "E: 0.030000 0000 0000 0"]
        let file = directory.appendingPathComponent("crowded.evemu").path
        try ((header + events).joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)

        let run = try Run("motionctl", ["frames", file, "--json"])
        #expect(run.status == 0, "\(run.error)")
        let frames = try run.jsonLines().filter { $0["event"] as? String == "frame" }
        let counts = frames.map { ($0["contacts"] as? [[String: Any]])?.count ?? -1 }
        #expect(counts == [31, 31, 31, 31], "\(run.output)")
        let phases = frames.map { Set((($0["contacts"] as? [[String: Any]]) ?? []).compactMap { $0["phase"] as? String }) }
        #expect(phases == [["began"], ["moved"], ["moved"], ["ended"]])
    }
}
