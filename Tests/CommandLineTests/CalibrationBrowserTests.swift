import Foundation
import Testing

extension Daemons {
    /// The calibration from the screen, end to end: a made-up panel mounted off by a
    /// known matrix, read through umockdev by the real libevdev; the calibration page in
    /// Debian's headless Chromium; `motionctl calibrate` driving both. Run by
    /// Tests/EndToEnd/calibration_in_browser.py, which plays each touch only once the page
    /// shows its target. A Chromium that cannot start fails the test; it is never skipped.
    @Suite("Calibration from the page, in Chromium")
    struct CalibrationBrowserTests {
        /// What the script's panel is off by: the matrix the calibration must find.
        static let matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]

        @Test("the written drop-in holds the panel's matrix; after the reload the same touches land on their targets within a pixel; a misclick is refused; the card under a target never moved")
        func calibrateFromThePage() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let run = try EndToEnd.fakePanelScript("calibration_in_browser.py", in: directory,
                                                   ["--artifacts", EndToEnd.repository.appendingPathComponent(".build/test-artifacts").path], deadline: 270)
            #expect(run.status == 0, "\(run.error)\n\(run.output)")
            let steps = try run.jsonLines()
            let names = steps.compactMap { $0["step"] as? String }
            #expect(names == ["ready", "open", "target", "misclick", "target", "target", "target", "target", "target", "written", "reloaded"]
                    + Array(repeating: "landed", count: 6) + ["screenshot"], "\(run.output)")

            // Five targets and the check, each drawn by the page where motionctl put it.
            let targets = steps.filter { $0["step"] as? String == "target" }
            #expect(targets.compactMap { $0["index"] as? Int } == [1, 2, 3, 4, 5, 6])
            for target in targets {
                let page = try #require(target["page"] as? [String: Double])
                let x = try #require(target["x"] as? Double), y = try #require(target["y"] as? Double)
                #expect(Swift.abs(page["x"]! - x / 1.5) <= 1 && Swift.abs(page["y"]! - y / 1.5) <= 1, "\(target)")
            }
            #expect((targets[1]["message"] as? String)?.contains("from the cross") == true, "the page asks again after a misclick")
            #expect((steps.first { $0["step"] as? String == "misclick" }?["distance"] as? Double ?? 0) > 1000)

            let written = try #require(steps.first { $0["step"] as? String == "written" })
            let matrix = try #require(written["matrix"] as? [Double])
            for (found, expected) in zip(matrix, Self.matrix) { #expect(Swift.abs(found - expected) < 1e-3, "\(matrix)") }
            let text = try #require(written["text"] as? String)
            #expect((written["path"] as? String)?.hasSuffix("/conf.d/90-calibration-04f3-2a1c.toml") == true)
            #expect(text.contains("[[calibration]]") && text.contains("ids = \"04f3:2a1c\""), "\(text)")
            #expect((written["check_px"] as? Double ?? 99) < 1)

            let reloaded = try #require(steps.first { $0["step"] as? String == "reloaded" })
            #expect(reloaded["calibration"] as? [Double] == matrix, "motiond took the drop-in")
            let ready = try #require(steps.first?["card"] as? [String: Double])
            #expect(reloaded["card"] as? [String: Double] == ready, "the card under the centre target did not move")

            let landed = steps.filter { $0["step"] as? String == "landed" }
            for landing in landed {
                let target = try #require(landing["target"] as? [Double]), at = try #require(landing["at"] as? [Double])
                #expect(Swift.abs(target[0] - at[0]) <= 1 && Swift.abs(target[1] - at[1]) <= 1, "\(landing)")
            }
        }
    }
}
