import MotionCore
import MotionConfiguration
import MotionServer
import MotionDaemon

/// The configuration loader on any text: it loads or says why not, with a line within the
/// text; a configuration that loads builds a daemon whose scene runs a few frames.
func fuzzConfig(_ bytes: [UInt8]) throws {
    let text = String(decoding: bytes, as: UTF8.self)
    let configuration: Configuration
    do {
        configuration = try Configuration.parse(text, file: "fuzz.toml")
    } catch {
        // Counted as toml++ counts them: "\r\n" is one Character in Swift, so name both.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).count
        try fuzzCheck((0...lines + 1).contains(error.line), "line \(error.line) in a text of \(lines) lines: \(error)")
        return
    }
    let clock = ManualFrameClock(now: 100)
    let daemon = Daemon(configuration: configuration, clock: clock, controlPolicy: { _ in true })
    let output = CollectingOutput()
    let session = daemon.connect(output, credentials: nil)
    defer { daemon.disconnect(session) }
    daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["*"]}"#, from: session)
    for frame in 1...10 { clock.tick(at: 100 + Double(frame) / 60) }
    for message in try output.take() {
        try fuzzCheck(message.allNumbersFinite, "a number that is not finite: \(message.encoded)")
    }
}
