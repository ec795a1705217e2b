import MotionCore
import MotionConfiguration
import MotionServer
import MotionWire
import MotionDaemon

/// The example scene, read once.
private let configuration = try! Configuration.load(file: repositoryFile("config/motiond.toml"))

/// The daemon's whole request handling: each line of the input is a request from a client
/// allowed to control, with a frame between requests. Every request gets exactly one reply,
/// everything the daemon sends is a JSON object, and positions stay finite.
func fuzzRequests(_ bytes: [UInt8]) throws {
    let clock = ManualFrameClock(now: 100)
    let daemon = Daemon(configuration: configuration, clock: clock, controlPolicy: { _ in true })
    let output = CollectingOutput()
    let session = daemon.connect(output, credentials: nil)
    defer { daemon.disconnect(session) }
    _ = try output.take()
    let text = String(decoding: bytes, as: UTF8.self)
    var frame = 0
    func tick() throws {
        frame += 1
        clock.tick(at: 100 + Double(frame) / 60)
        try check(output.take(), replies: 0)
    }
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        daemon.receive(line, from: session)
        try check(output.take(), replies: 1)
        try tick()
    }
    for _ in 0..<30 { try tick() }
}

private func check(_ messages: [JSONInput], replies: Int) throws {
    let count = messages.filter { $0["ok"] != nil }.count
    try fuzzCheck(count == replies, "\(count) replies where \(replies) was due: \(messages.map(\.encoded))")
    for message in messages {
        try fuzzCheck(message.allNumbersFinite, "a number that is not finite: \(message.encoded)")
        if let stream = message["stream"]?.string, stream.hasSuffix(".position"), message["event"]?.string == "value" {
            let value = message["value"]
            try fuzzCheck(value?["x"]?.number != nil && value?["y"]?.number != nil, "a position that is not two numbers: \(message.encoded)")
        }
    }
}
