import Foundation
import Testing

extension Daemons {
    /// The "in a real browser": Debian's headless Chromium opens the live page that
    /// motiond serves while it replays a drag, and the page must show the card where motiond
    /// has it. Driven by Tests/EndToEnd/browser_live_page.py over the DevTools protocol. A
    /// Chromium that cannot start fails the test (with its log); it is never skipped.
    @Suite("The live page in Chromium")
    struct BrowserLivePageTests {
        /// The card's snap points leave out where it starts, so a page that never received a
        /// value (only the scene as it was at start) cannot pass by luck.
        static let configuration = """
            [screen]
            width = 1920
            height = 1080

            [[element]]
            id = "card"
            center = [866, 830]
            size = [520, 360]

            [element.tossable]
            snap_points = { left = [300, 830], right = [1620, 830] }
            spring = { tension = 342, friction = 30 }

            [[element]]
            id = "photo"
            center = [1400, 300]
            size = [640, 420]
            rotation = 0.1

            [element.directly_manipulable]
            """

        @Test("after a replayed drag and a new destination, the page's card is where motionctl get card.position says (within 1 px); a screenshot is saved")
        func cardWhereMotiondHasIt() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("motiond.toml")
            try Self.configuration.write(to: config, atomically: true, encoding: .utf8)
            let artifacts = EndToEnd.repository.appendingPathComponent(".build/test-artifacts")
            let run = try Run("/usr/bin/python3", [
                EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/browser_live_page.py").path,
                "--motiond", Run.productsDirectory.appendingPathComponent("motiond").path,
                "--motionctl", Run.productsDirectory.appendingPathComponent("motionctl").path,
                "--config", config.path,
                "--recording", EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path,
                "--artifacts", artifacts.path,
            ], deadline: 270)
            #expect(run.status == 0, "\(run.error)\n\(run.output)")
            let steps = try run.jsonLines()
            #expect(steps.map { $0["step"] as? String } == ["replayed", "moved", "screenshot"], "\(run.output)")
            let moved = try #require(steps.first { $0["step"] as? String == "moved" }?["motionctl"] as? [String: Double])
            #expect(moved == ["x": 1000, "y": 400], "the card went to the destination set")
            if let path = steps.last?["path"] as? String { print("live page screenshot: \(path)") }
        }
    }
}
