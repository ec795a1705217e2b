import Foundation
import MotionCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

@Suite("Socket protocol")
struct ProtocolTests {
    @Test("hello names the protocol, the version and every stream")
    func hello() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        _ = daemon.connect(output, credentials: nil)
        let hello = try #require(try output.take().first)
        #expect(hello["event"]?.string == "hello" && hello["protocol"]?.integer == 1)
        #expect(hello["version"]?.string == MotiondVersion.string)
        let streams = hello["streams"]?.array?.compactMap(\.string) ?? []
        for name in ["card.position", "card.rotation", "card.scale", "card.state", "card.snap", "card.drag", "marker.destination", "photo.pinch"] {
            #expect(streams.contains(name), "\(name)")
        }
    }

    @Test("subscribe replies, then sends each stream's current value; later changes follow with increasing seq")
    func subscribe() throws {
        let (daemon, clock) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["marker.position", "card.s*"]}"#, from: session)
        let messages = try output.take()
        #expect(messages.first?["id"]?.integer == 1 && messages.first?["ok"]?.bool == true)
        #expect(Set(messages.first?["result"]?["streams"]?.array?.compactMap(\.string) ?? []) == ["marker.position", "card.size", "card.scale", "card.state", "card.snap", "card.spring"])
        let initial = messages.dropFirst()
        #expect(initial.allSatisfy { $0["event"]?.string == "value" })
        #expect(Set(initial.compactMap { $0["stream"]?.string }) == ["marker.position", "card.size", "card.scale", "card.state", "card.snap", "card.spring"])
        #expect(initial.first { $0["stream"]?.string == "marker.position" }?["value"] == .object(["x": .number(960), "y": .number(540)]))

        // Move the marker: its spring publishes values, each with the frame's time and a larger seq.
        daemon.receive(#"{"id": 2, "op": "set", "stream": "marker.destination", "value": {"x": 100, "y": 200}}"#, from: session)
        #expect(try output.take().first?["ok"]?.bool == true)
        for k in 1...90 { clock.tick(at: 100 + Double(k) / 60) }
        let values = try output.take().filter { $0["stream"]?.string == "marker.position" }
        #expect(values.count > 10)
        let seqs = values.compactMap { $0["seq"]?.integer }
        #expect(zip(seqs.dropFirst(), seqs).allSatisfy { $0 > $1 })
        #expect(values.last?["value"] == .object(["x": .number(100), "y": .number(200)]))
        #expect(values.allSatisfy { ($0["t"]?.number ?? 0) > 100 })
    }

    @Test("a client that keeps up gets each frame's lines in one write; one that is behind gets the same lines one by one")
    func frameBatches() throws {
        let (daemon, clock) = try makeDaemon()
        let keepingUp = RecordingOutput(), behind = RecordingOutput()
        behind.isKeepingUp = false
        let sessions = [daemon.connect(keepingUp, credentials: nil), daemon.connect(behind, credentials: nil)]
        for session in sessions { daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["marker.*", "card.*"]}"#, from: session) }
        daemon.receive(#"{"id": 2, "op": "set", "stream": "marker.destination", "value": {"x": 100, "y": 200}}"#, from: sessions[0])
        _ = try keepingUp.take()
        _ = try behind.take()
        (keepingUp.writes, behind.writes) = (0, 0)
        for k in 1...90 { clock.tick(at: 100 + Double(k) / 60) }
        let lines = try keepingUp.take()
        #expect(lines.count > 10)
        #expect(lines == (try behind.take()), "both get the same values, in the same order")
        // One write per frame that had something, at most one per tick; one per line for the other.
        #expect(keepingUp.writes <= 90)
        #expect(behind.writes == lines.count)
        #expect(keepingUp.writes < behind.writes, "some frame carried more than one update")
    }

    @Test("a client that goes while a frame is sent to it is kept until the frame is sent, then let go; the others get the frame")
    func clientLeavingMidFrame() throws {
        let (daemon, clock) = try makeDaemon()
        let leaving = LeavingOutput(), staying = RecordingOutput()
        leaving.daemon = daemon
        // Only the daemon holds the leaving client's session, as only a transport's would.
        func connectLeaving() {
            let session = daemon.connect(leaving, credentials: nil)
            leaving.session = session
            daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["marker.*"]}"#, from: session)
        }
        connectLeaving()
        let other = daemon.connect(staying, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["marker.*"]}"#, from: other)
        daemon.receive(#"{"id": 2, "op": "set", "stream": "marker.destination", "value": {"x": 100, "y": 200}}"#, from: other)
        _ = try staying.take()
        for k in 1...90 { clock.tick(at: 100 + Double(k) / 60) }
        #expect(leaving.aliveAfterLeaving == true, "the frame being sent holds its subscribers until it is sent")
        #expect(leaving.session == nil, "once sent, nothing holds the client that went")
        #expect(daemon.clientCount == 1)
        let values = try staying.take().filter { $0["stream"]?.string == "marker.position" }
        #expect(values.count > 10)
        #expect(values.last?["value"] == .object(["x": .number(100), "y": .number(200)]))
    }

    @Test("malformed lines get an error naming the problem, and the connection stays usable", arguments: [
        ("{not json", "bad_json", nil as Int?),
        ("[1, 2]", "bad_json", nil),
        (#"{"op": "list"}"#, "bad_request", nil),
        (#"{"id": "seven", "op": "list"}"#, "bad_request", nil),
        (#"{"id": 4}"#, "bad_request", 4),
        (#"{"id": 5, "op": "dance"}"#, "unknown_op", 5),
        (#"{"id": 6, "op": "subscribe", "streams": "card.*"}"#, "bad_request", 6),
        (#"{"id": 7, "op": "subscribe", "streams": ["nothing.*"]}"#, "unknown_stream", 7),
        (#"{"id": 8, "op": "get", "stream": 3}"#, "bad_request", 8),
        (#"{"id": 9, "op": "set", "stream": "card.state", "value": "active"}"#, "not_writable", 9),
        (#"{"id": 10, "op": "set", "stream": "card.position", "value": 5}"#, "bad_value", 10),
        (#"{"id": 11, "op": "set", "stream": "card.spring", "value": {"friction": 0}}"#, "bad_value", 11),
        (#"{"id": 12, "op": "remove_element", "element": "ghost"}"#, "unknown_element", 12),
        (#"{"id": 13, "op": "remove_element"}"#, "bad_request", 13),
    ])
    func malformed(line: String, code: String, id: Int?) throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(Substring(line), from: session)
        let reply = try #require(try output.take().first)
        #expect(reply["ok"]?.bool == false)
        #expect(reply["error"]?["code"]?.string == code, "\(reply)")
        #expect(reply["error"]?["message"]?.string?.isEmpty == false)
        #expect(reply["id"] == (id.map { .number(Double($0)) } ?? .null))
        // Still usable.
        daemon.receive(#"{"id": 99, "op": "list"}"#, from: session)
        #expect(try output.take().first?["ok"]?.bool == true)
        #expect(!output.closed)
    }

    @Test("control operations are refused to a peer without the right, allowed to one with it")
    func access() throws {
        let (reader, _) = try makeDaemon(control: false)
        let output = RecordingOutput()
        let session = reader.connect(output, credentials: PeerCredentials(pid: 1, uid: 65534, gid: 65534))
        #expect(try output.take().first?["control"]?.bool == false)
        for line in [#"{"id": 1, "op": "set", "stream": "card.position", "value": {"x": 1, "y": 2}}"#,
                     #"{"id": 2, "op": "add_element", "element": {"id": "x", "center": [1, 2], "size": [3, 4]}}"#,
                     #"{"id": 3, "op": "remove_element", "element": "card"}"#] {
            reader.receive(Substring(line), from: session)
            #expect(try output.take().first?["error"]?["code"]?.string == "forbidden")
        }
        reader.receive(#"{"id": 4, "op": "get", "stream": "card.position"}"#, from: session)
        #expect(try output.take().first?["ok"]?.bool == true, "reading is open to all")
    }

    @Test("add_element and remove_element change the scene while it runs; subscribers to a glob see new streams")
    func elements() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["note.*", "card.position"]}"#, from: session)
        #expect(try output.take().contains { $0["error"]?["code"]?.string == "unknown_stream" }, "no note yet")
        daemon.receive(#"{"id": 2, "op": "subscribe", "streams": ["*.position"]}"#, from: session)
        _ = try output.take()
        daemon.receive(#"{"id": 3, "op": "add_element", "element": {"id": "note", "center": [300, 200], "size": [200, 120], "z": 5, "interactions": {"tossable": {"destination": [300, 200]}}}}"#, from: session)
        let added = try output.take()
        let reply = try #require(added.first { $0["id"]?.integer == 3 })
        #expect(reply["ok"]?.bool == true && reply["result"]?["interactions"] == .array([.string("tossable")]))
        #expect(added.contains { $0["stream"]?.string == "note.position" }, "the new stream's value, for the *.position subscriber")
        daemon.receive(#"{"id": 4, "op": "add_element", "element": {"id": "note", "center": [1, 1], "size": [1, 1]}}"#, from: session)
        #expect(try output.take().first?["error"]?["code"]?.string == "exists")
        daemon.receive(#"{"id": 5, "op": "add_element", "element": {"id": "bad", "center": [1, 1], "size": [1, 1], "colour": "red"}}"#, from: session)
        let bad = try #require(try output.take().first)
        #expect(bad["error"]?["code"]?.string == "bad_value" && bad["error"]?["message"]?.string?.contains("unknown key 'colour'") == true)
        daemon.receive(#"{"id": 6, "op": "remove_element", "element": "note"}"#, from: session)
        #expect(try output.take().first?["ok"]?.bool == true)
        daemon.receive(#"{"id": 7, "op": "elements"}"#, from: session)
        let ids = try output.take().first?["result"]?["elements"]?.array?.compactMap { $0["id"]?.string }
        #expect(ids == ["card", "photo", "drawer", "marker"])
    }

    @Test("an optional subscription waits for an element that does not exist yet, follows it once added, and can be let go")
    func optionalSubscription() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["note.position", "card.position"], "optional": true}"#, from: session)
        let first = try output.take()
        let reply = try #require(first.first { $0["id"]?.integer == 1 })
        #expect(reply["ok"]?.bool == true)
        #expect(reply["result"]?["streams"] == .array([.string("card.position")]))
        #expect(reply["result"]?["waiting"] == .array([.string("note.position")]))
        #expect(first.contains { $0["stream"]?.string == "card.position" && $0["event"]?.string == "value" })

        // Another client adds the element: the waiting pattern picks up its stream.
        let other = daemon.connect(RecordingOutput(), credentials: nil)
        daemon.receive(#"{"id": 1, "op": "add_element", "element": {"id": "note", "center": [300, 200], "size": [20, 20]}}"#, from: other)
        let values = try output.take().filter { $0["stream"]?.string == "note.position" }
        #expect(values.first?["value"] == .object(["x": .number(300), "y": .number(200)]), "the new element's value reaches the waiting subscriber")
        daemon.receive(#"{"id": 2, "op": "set", "stream": "note.position", "value": {"x": 310, "y": 200}}"#, from: other)
        #expect(try output.take().contains { $0["stream"]?.string == "note.position" && $0["value"]?["x"]?.number == 310 })

        // A pattern still waiting is let go like any other; a pattern never held stays an error.
        daemon.receive(#"{"id": 3, "op": "subscribe", "streams": ["later.*"], "optional": true}"#, from: session)
        _ = try output.take()
        daemon.receive(#"{"id": 4, "op": "unsubscribe", "streams": ["later.*"]}"#, from: session)
        #expect(try output.take().first?["ok"]?.bool == true)
        daemon.receive(#"{"id": 5, "op": "add_element", "element": {"id": "later", "center": [1, 1], "size": [1, 1]}}"#, from: other)
        #expect(try output.take().allSatisfy { $0["stream"]?.string?.hasPrefix("later.") != true }, "no longer followed")
        daemon.receive(#"{"id": 6, "op": "unsubscribe", "streams": ["never.*"]}"#, from: session)
        #expect(try output.take().first?["error"]?["code"]?.string == "unknown_stream")
        daemon.receive(#"{"id": 7, "op": "subscribe", "streams": ["x.*"], "optional": "yes"}"#, from: session)
        #expect(try output.take().first?["error"]?["code"]?.string == "bad_request")
    }

    @Test("a gesture's state events carry its release velocity at the end")
    func gestureStates() throws {
        let (daemon, clock) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["card.drag"]}"#, from: session)
        _ = try output.take()
        for (index, x) in stride(from: 866.0, through: 1166, by: 30).enumerated() {
            clock.now = 100 + Double(index) / 100
            daemon.process(TouchFrame(time: clock.now, contacts: [TouchContact(slot: 0, trackingID: 1, phase: index == 0 ? .began : .moved, deviceX: 0, deviceY: 0, position: Point(x: x, y: 830))]), from: testPanel)
        }
        daemon.process(TouchFrame(time: 100.11, contacts: [TouchContact(slot: 0, trackingID: 1, phase: .ended, deviceX: 0, deviceY: 0, position: Point(x: 1166, y: 830))]), from: testPanel)
        let states = try output.take().filter { $0["event"]?.string == "state" }
        #expect(states.compactMap { $0["state"]?.string } == ["began", "ended"])
        let velocity = try #require(states.last?["velocity"]?["x"]?.number)
        #expect(Swift.abs(velocity - 3000) < 1e-6)
        #expect(states.first?["velocity"] == nil)
    }

    @Test("a reload keeps the clients and matches their subscriptions again; stats report a refused one")
    func reload() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["*.position"]}"#, from: session)
        _ = try output.take()
        var configuration = daemon.configuration
        configuration.elements = [ElementSettings(id: "solo", center: Point(x: 5, y: 5), size: Size(width: 10, height: 10))]
        daemon.reload(configuration)
        #expect(try output.take().compactMap { $0["stream"]?.string }.sorted() == ["screen.position", "solo.position"])
        daemon.reloadFailed("kiosk.toml:3: unknown key 'x'")
        daemon.receive(#"{"id": 2, "op": "stats"}"#, from: session)
        let stats = try #require(try output.take().first?["result"])
        #expect(stats["config"]?["last_error"]?.string == "kiosk.toml:3: unknown key 'x'")
        #expect(stats["clients"]?.array?.count == 1)
    }

    @Test("JSON input: strict, with the column of the problem")
    func jsonInput() throws {
        #expect(try JSONInput(parsing: #" {"a": [1, -2.5e2, true, null, "\u00e9\n"]} "#) ==
            .object(["a": .array([.number(1), .number(-250), .bool(true), .null, .string("é\n")])]))
        for (text, column) in [("{\"a\" 1}", 6), ("[1,]", 4), ("01", 1), ("\"tab\there\"", 5), ("{} x", 4)] {
            #expect { try JSONInput(parsing: Substring(text)) } throws: { ($0 as? JSONInputError)?.column == column }
        }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect { try JSONInput(parsing: Substring(deep)) } throws: { ($0 as? JSONInputError)?.message.contains("nested deeper") == true }
    }

    @Test("docs/protocol.md's table of ops lists exactly the ops the daemon has")
    func opsDocumented() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/protocol.md")
        let text = try String(contentsOf: file, encoding: .utf8)
        let documented = Set(text.split(separator: "\n").compactMap { line -> String? in
            guard let match = line.firstMatch(of: #/^\| `([a-z_]+)` \| [^|]*\| [^|]*\|$/#), !line.contains("| `bad_") else { return nil }
            return String(match.output.1)
        })
        #expect(documented.isSuperset(of: Operation.allCases.map(\.rawValue)), "undocumented: \(Set(Operation.allCases.map(\.rawValue)).subtracting(documented))")
    }
}

/// An output whose client goes while a frame is sent to it: it disconnects its own session
/// from inside the send, as a transport does when the slow-client rule drops a client.
private final class LeavingOutput: ClientOutput {
    weak var daemon: Daemon?
    weak var session: ClientSession?
    /// Whether the session was still alive right after its disconnect, while the frame
    /// was being sent; nil before the first frame.
    var aliveAfterLeaving: Bool?
    let coalesced = 0
    let isKeepingUp = true

    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) {}
    func flush() {}
    func close(saying line: ArraySlice<UInt8>?) {}

    func sendFrame(_ lines: ArraySlice<UInt8>, ranges: [Range<Int>]) -> Bool {
        guard aliveAfterLeaving == nil else { return true }
        leave()
        aliveAfterLeaving = session != nil
        return true
    }

    /// Disconnects, holding the session no longer than the call.
    private func leave() {
        guard let daemon, let session else { return }
        daemon.disconnect(session)
    }
}
