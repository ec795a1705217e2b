import Foundation
import Testing

/// The browser client's own tests (Tests/EndToEnd/motiond_js.test.mjs) run in Node 20 with a
/// fake WebSocket, clock and animation frame: id matching, timeouts, reconnect back-off and
/// re-subscribing, one style write per animation frame.
@Suite("motiond.js in Node", .timeLimit(.minutes(2)))
struct JavaScriptClientTests {
    @Test("node --test Tests/EndToEnd/motiond_js.test.mjs passes")
    func nodeTests() throws {
        let tests = EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/motiond_js.test.mjs").path
        let run = try Run("node", ["--test", tests], absolute: true, deadline: 90)
        #expect(run.status == 0, "the client's tests failed:\n\(run.output.suffix(6000))\n\(run.error.suffix(2000))")
        #expect(run.output.contains("# fail 0") && !run.output.contains("# pass 0"), "\(run.output.suffix(2000))")
    }
}
