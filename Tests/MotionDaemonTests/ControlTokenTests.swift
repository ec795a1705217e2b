import Testing
@testable import MotionDaemon

/// The WebSocket's `auth` token (`[websocket] control_token_file`), as the daemon compares it.
@Suite("Control tokens")
struct ControlTokenTests {
    @Test("tokens compare equal only when equal, whatever their lengths")
    func tokens() {
        #expect(ControlToken.matches("abc", "abc"))
        for (given, expected) in [("abd", "abc"), ("ab", "abc"), ("abcd", "abc"), ("", "abc"), ("abc\u{0}", "abc")] {
            #expect(!ControlToken.matches(given, expected), "\(given)")
        }
    }
}
