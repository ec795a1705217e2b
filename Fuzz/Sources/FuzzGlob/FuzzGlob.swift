import FuzzSupport
import MotionCore
import MotionServer

/// The example scene, read once.
let configuration = try! Configuration.load(file: repositoryFile("config/motiond.toml"))

/// Stream globs through `subscribe`, compared with a plain matcher. The input's first line,
/// when there is one, names an element added first, so stream names vary too; the rest is
/// the pattern. A pattern the daemon refuses as a bad request (too long) is fine; otherwise
/// it subscribes to exactly the streams the reference matcher finds, or to none with
/// `unknown_stream`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGlob(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let clock = ManualFrameClock(now: 100)
    let daemon = Daemon(configuration: configuration, clock: clock, controlPolicy: { _ in true })
    let output = CollectingOutput()
    let session = daemon.connect(output, credentials: nil)
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    var pattern = Substring(text)
    if let newline = text.firstIndex(of: "\n") {
        let element = JSONInput.quoted(String(text[..<newline]))
        pattern = text[text.index(after: newline)...]
        _ = output.take()
        daemon.receive(#"{"id": 1, "op": "add_element", "element": {"id": \#(element), "center": [10, 20], "size": [30, 40]}}"#, from: session)
    }
    _ = output.take()
    daemon.receive(#"{"id": 2, "op": "list"}"#, from: session)
    let streams = output.take().first?["result"]?["streams"]?.array?.compactMap { $0["stream"]?.string } ?? []
    fuzzCheck(!streams.isEmpty, "list names no streams")

    daemon.receive(Substring(#"{"id": 3, "op": "subscribe", "streams": [\#(JSONInput.quoted(String(pattern)))]}"#), from: session)
    let reply = output.take().first { $0["id"]?.integer == 3 }
    let expected = Set(streams.filter { referenceGlobMatches(String(pattern), $0) })
    if let subscribed = reply?["result"]?["streams"]?.array {
        fuzzCheck(Set(subscribed.compactMap(\.string)) == expected, "\(String(pattern).debugDescription) subscribed \(subscribed.map(\.encoded)), expected \(expected.sorted())")
    } else {
        let code = reply?["error"]?["code"]?.string
        fuzzCheck(code == "bad_request" || (code == "unknown_stream" && expected.isEmpty), "\(String(pattern).debugDescription) got \(reply?.encoded ?? "no reply"), expected \(expected.sorted())")
    }
    daemon.disconnect(session)
    return 0
}
