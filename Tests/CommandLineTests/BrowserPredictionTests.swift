import Foundation
import Testing

extension Daemons {
    /// motiond.js's `bind` in Debian's headless Chromium, against a real motiond predicting
    /// touches: the page draws where the card will be, not where it was
    /// (Tests/EndToEnd/prediction_in_browser.py).
    @Suite("Touch prediction in Chromium")
    struct BrowserPredictionTests {
        @Test("bind draws the card's predicted position while it is apart from its position, never the plain one; the live page shows the predicted box")
        func bind() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let example = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
            let config = directory.appendingPathComponent("motiond.toml")
            try example.replacingOccurrences(of: "# prediction = 0.016", with: "prediction = 0.016").write(to: config, atomically: true, encoding: .utf8)
            let run = try Run("/usr/bin/python3", [
                EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/prediction_in_browser.py").path,
                "--motiond", Run.productsDirectory.appendingPathComponent("motiond").path,
                "--config", config.path,
                "--recording", EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path,
            ], absolute: true, deadline: 200)
            #expect(run.status == 0, "\(run.error)\n\(run.output)")
            let seen = try #require(try run.jsonLines().first { $0["step"] as? String == "bound" }, "\(run.output)\n\(run.error)")
            #expect((seen["predicted"] as? Int ?? 0) >= 10, "\(seen)")
            #expect(seen["plainWhenApart"] as? Int == 0, "\(seen)")
            #expect((seen["ghosts"] as? Int ?? 0) >= 1, "\(seen)")
        }
    }
}
