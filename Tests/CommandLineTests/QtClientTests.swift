import Foundation
import Testing

extension Daemons {
    /// The QML module's own tests (clients/qt/test.sh: configured and built with CMake in
    /// .build/qt, run offscreen) against the motiond built here, which they start themselves
    /// (replaying the recorded drag, stopped and started again on one socket): a bound Item
    /// follows card.position, error replies reach the error signal with their codes, and the
    /// binding resumes after a restart. In the Daemons suite, as they start motiond.
    @Suite("The Qt client")
    struct QtClientTests {
        @Test("clients/qt/test.sh builds the QML module and passes against the built motiond")
        func qtTests() throws {
            let script = EndToEnd.repository.appendingPathComponent("clients/qt/test.sh").path
            let run = try Run("/usr/bin/env", [
                "MOTIOND=" + Run.productsDirectory.appendingPathComponent("motiond").path, "QT_TEST_TIMEOUT=180", script,
            ], absolute: true, deadline: 600)
            let said = run.output + run.error
            #expect(run.status == 0, "the Qt client's tests failed:\n\(Self.failures(in: said))\n\(said.suffix(6000))")
            // QtTest ends with "Totals: N passed, 0 failed, 0 skipped, …".
            let totals = said.split(separator: "\n").last { $0.hasPrefix("Totals:") }.map(String.init) ?? "(no totals)"
            #expect(totals.contains(" 0 failed, 0 skipped") && !totals.hasPrefix("Totals: 0 passed"), "\(totals)\n\(said.suffix(3000))")
        }

        /// QtTest's lines that name a failed case and where it failed. The output's tail is
        /// mostly motiond's log, which can push them out of the message.
        static func failures(in output: String) -> String {
            let lines = output.split(separator: "\n").filter {
                let line = $0.drop { $0 == " " }
                return line.hasPrefix("FAIL!") || line.hasPrefix("Loc:") || line.hasPrefix("XPASS")
            }
            return lines.isEmpty ? "(no FAIL! line)" : lines.prefix(40).joined(separator: "\n")
        }
    }
}
