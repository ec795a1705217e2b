import MotionCore
import MotionConfiguration
import MotionServer
import MotionWire
import MotionDaemon

/// A daemon with the example scene, made once: each input adds and removes its element, so
/// the scene is the same for every input.
nonisolated(unsafe) private let daemon = Daemon(
    configuration: try! Configuration.load(file: repositoryFile("config/motiond.toml")), clock: ManualFrameClock(now: 100), controlPolicy: { _ in true })

/// Stream globs through `subscribe`, compared with a plain matcher. The input's first line,
/// when there is one, names an element added first, so stream names vary too; the rest is
/// the pattern. A pattern the daemon refuses as a bad request (too long) is fine; otherwise
/// it subscribes to exactly the streams the reference matcher finds, or to none with
/// `unknown_stream`.
func fuzzGlob(_ bytes: [UInt8]) throws {
    let output = CollectingOutput()
    let session = daemon.connect(output, credentials: nil)
    defer { daemon.disconnect(session) }
    let text = String(decoding: bytes, as: UTF8.self)
    var pattern = Substring(text)
    var element: String?
    if let newline = text.firstIndex(of: "\n") {
        element = JSONInput.quoted(String(text[..<newline]))
        pattern = text[text.index(after: newline)...]
        _ = try output.take()
        daemon.receive(#"{"id": 1, "op": "add_element", "element": {"id": \#(element!), "center": [10, 20], "size": [30, 40]}}"#, from: session)
        // Remove only what this input added: an id the scene has already is refused.
        if try output.take().first(where: { $0["id"]?.integer == 1 })?["ok"]?.bool != true { element = nil }
    }
    // Checked after the element is gone, so that the next input finds the same scene.
    let subscribed = Result { try checkSubscription(to: pattern, session: session, output: output) }
    if let element {
        // What was added can be removed by the same id (a NUL once made them differ, and the
        // scene grew with every such input).
        _ = try output.take()
        daemon.receive(#"{"id": 4, "op": "remove_element", "element": \#(element)}"#, from: session)
        let removed = try output.take().first { $0["id"]?.integer == 4 }?["ok"]?.bool == true
        try fuzzCheck(removed, "\(element) was added but cannot be removed")
    }
    try subscribed.get()
}

/// Subscribes to `pattern` and compares the streams it got with the reference matcher's.
private func checkSubscription(to pattern: Substring, session: ClientSession, output: CollectingOutput) throws {
    _ = try output.take()
    daemon.receive(#"{"id": 2, "op": "list"}"#, from: session)
    let streams = try output.take().first?["result"]?["streams"]?.array?.compactMap { $0["stream"]?.string } ?? []
    try fuzzCheck(!streams.isEmpty, "list names no streams")

    daemon.receive(Substring(#"{"id": 3, "op": "subscribe", "streams": [\#(JSONInput.quoted(String(pattern)))]}"#), from: session)
    let reply = try output.take().first { $0["id"]?.integer == 3 }
    let expected = Set(streams.filter { referenceGlobMatches(String(pattern), $0) })
    if let subscribed = reply?["result"]?["streams"]?.array {
        try fuzzCheck(Set(subscribed.compactMap(\.string)) == expected, "\(String(pattern).debugDescription) subscribed \(subscribed.map(\.encoded)), expected \(expected.sorted())")
    } else {
        let code = reply?["error"]?["code"]?.string
        try fuzzCheck(code == "bad_request" || (code == "unknown_stream" && expected.isEmpty), "\(String(pattern).debugDescription) got \(reply?.encoded ?? "no reply"), expected \(expected.sorted())")
    }
}
