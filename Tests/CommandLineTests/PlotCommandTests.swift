import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `motionctl plot`: the SVG is parsed back and checked against what `frames`, `gestures`
/// and `simulate` say about the same recording.
@Suite("motionctl plot")
struct PlotCommandTests {
    static let fourFingers = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__4f-drag-down.evemu").path
    static let upDown = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu").path

    /// The plot of `recording` as an XML document, and the map from screen pixels to the
    /// drawing's coordinates, read from the screen's rectangle.
    static func plot(_ arguments: [String], screenWidth: Double) throws -> (XMLDocument, (Double, Double) -> (Double, Double)) {
        let run = try Run("motionctl", ["plot"] + arguments + ["--svg", "-"])
        try #require(run.status == 0, "\(run.error)")
        let document = try XMLDocument(xmlString: run.output, options: [])
        let screen = try #require(try document.nodes(forXPath: "//*[@class='screen']").first)
        func attribute(_ node: XMLNode, _ name: String) -> Double { Double(Self.attribute(node, name)) ?? .nan }
        let originX = attribute(screen, "x"), originY = attribute(screen, "y"), scale = attribute(screen, "width") / screenWidth
        return (document, { (originX + $0 * scale, originY + $1 * scale) })
    }

    static func attribute(_ node: XMLNode, _ name: String) -> String { (try? node.nodes(forXPath: "@\(name)").first?.stringValue) ?? "" }

    @Test("each finger is a trace of its own colour from its landing to its lift, where frames puts them")
    func fingers() throws {
        // On an 800 × 480 screen the Atmel panel's units are pixels, as frames prints them.
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("kiosk.toml").path
        try "[screen]\nwidth = 800\nheight = 480\n".write(toFile: file, atomically: true, encoding: .utf8)
        let (document, map) = try Self.plot([Self.fourFingers, "--config", file], screenWidth: 800)
        let frames = try Run("motionctl", ["frames", Self.fourFingers, "--json"]).jsonLines().filter { $0["event"] as? String == "frame" }
        var landings: [Int: (Double, Double)] = [:], lifts: [Int: (Double, Double)] = [:]
        for frame in frames {
            for contact in frame["contacts"] as? [[String: Any]] ?? [] {
                let id = contact["id"] as? Int ?? -1, point = (contact["x"] as? Double ?? .nan, contact["y"] as? Double ?? .nan)
                if contact["phase"] as? String == "began" { landings[id] = point }
                if contact["phase"] as? String == "ended" { lifts[id] = point }
            }
        }
        try #require(landings.count == 4 && lifts.count == 4)
        let fingers = try document.nodes(forXPath: "//*[@class='finger']")
        #expect(fingers.count == 4)
        #expect(fingers.allSatisfy { Self.attribute($0, "data-end") == "ended" })
        let colours = try fingers.map { try Self.attribute(#require(try $0.nodes(forXPath: "*[local-name()='polyline']").first), "stroke") }
        #expect(Set(colours).count == 4, "one colour per finger: \(colours)")
        func near(_ a: (Double, Double), _ b: (Double, Double)) -> Bool { abs(a.0 - b.0) < 0.2 && abs(a.1 - b.1) < 0.2 }
        for finger in fingers {
            let landing = try #require(try finger.nodes(forXPath: "*[@class='landing']").first)
            let lift = try #require(try finger.nodes(forXPath: "*[@class='lift']").first)
            let drawnLanding = (Double(Self.attribute(landing, "cx"))!, Double(Self.attribute(landing, "cy"))!)
            let drawnLift = (Double(Self.attribute(lift, "cx"))!, Double(Self.attribute(lift, "cy"))!)
            let id = try #require(landings.first { near(map($0.value.0, $0.value.1), drawnLanding) }?.key, "a landing at \(drawnLanding) that frames does not have")
            #expect(near(map(lifts[id]!.0, lifts[id]!.1), drawnLift), "finger \(id) lifts at \(drawnLift)")
        }
    }

    @Test("the recognizers' marks are the began, ended and recognized events gestures prints")
    func gestures() throws {
        let (document, _) = try Self.plot([Self.fourFingers], screenWidth: 1920)
        let events = try Run("motionctl", ["gestures", Self.fourFingers, "--json"]).jsonLines()
        let expected = events.compactMap { event -> String? in
            guard let kind = event["gesture"] as? String, let state = event["state"] as? String,
                  ["began", "ended", "cancelled", "recognized"].contains(state) else { return nil }
            return "\(kind) \(state)"
        }
        try #require(!expected.isEmpty)
        let marks = try document.nodes(forXPath: "//*[@class='gesture']/*[local-name()='text']").map { $0.stringValue ?? "" }
        #expect(marks == expected)
    }

    @Test("with a configuration, the screen is its screen and each element's centre follows simulate")
    func elements() throws {
        let directory = try EndToEnd.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("kiosk.toml").path
        try """
            [screen]
            width = 800
            height = 480

            [[element]]
            id = "card"
            center = [300, 200]
            size = [300, 200]

            [element.tossable]
            destination = [600, 300]
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let (document, map) = try Self.plot([Self.upDown, "--config", file], screenWidth: 800)
        let element = try #require(try document.nodes(forXPath: "//*[@class='element']").first)
        #expect(Self.attribute(element, "data-id") == "card")
        let path = try #require(try element.nodes(forXPath: "*[@class='element-path']").first)
        let points = Self.attribute(path, "points").split(separator: " ").map { $0.split(separator: ",").compactMap { Double($0) } }
        let simulated = try Run("motionctl", ["simulate", Self.upDown, "--config", file, "--json"]).jsonLines()
            .filter { $0["stream"] as? String == "card.position" }.compactMap { $0["value"] as? [String: Double] }
        #expect(points.count == simulated.count + 1, "the configured centre, then every published position")
        let start = map(300, 200), end = map(simulated.last?["x"] ?? .nan, simulated.last?["y"] ?? .nan)
        #expect(abs(points.first![0] - start.0) < 0.1 && abs(points.first![1] - start.1) < 0.1)
        #expect(abs(points.last![0] - end.0) < 0.1 && abs(points.last![1] - end.1) < 0.1)
    }

    @Test("a file it cannot write is an error that names it, and --svg is required")
    func errors() throws {
        let run = try Run("motionctl", ["plot", Self.upDown, "--svg", "/nonexistent/dir/plot.svg"])
        #expect(run.status == 1 && run.error.contains("cannot write /nonexistent/dir/plot.svg"), "\(run.error)")
        let missing = try Run("motionctl", ["plot", Self.upDown])
        #expect(missing.status == 2 && missing.error.contains("--svg"), "\(missing.error)")
    }
}
