import Foundation
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionDaemon
import TouchInput
@testable import MotionConfiguration
import MotionWire

@Suite("screen.contacts")
struct ContactsStreamTests {
    func contact(_ trackingID: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double, slot: Int = 0) -> TouchContact {
        TouchContact(slot: slot, trackingID: trackingID, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: x, y: y))
    }

    /// The values of screen.contacts among what a client received: each as [(id, x, y, device)].
    func values(_ messages: [JSONInput]) -> [[(id: Int, x: Double, y: Double, device: String)]] {
        messages.filter { $0["event"]?.string == "value" && $0["stream"]?.string == ScreenContacts.name }.map { message in
            (message["value"]?.array ?? []).map { ($0["id"]?.integer ?? -1, $0["x"]?.number ?? .nan, $0["y"]?.number ?? .nan, $0["device"]?.string ?? "") }
        }
    }

    @Test("a subscriber sees fingers land, move and lift, with numbers that last and are not reused, and one empty value at the end")
    func lifecycle() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["screen.contacts"]}"#, from: session)
        let initial = values(try output.take())
        #expect(initial.count == 1 && initial[0].isEmpty, "the current value, no fingers")

        let node = "/dev/input/event7"
        daemon.process(TouchFrame(time: 1, contacts: [contact(5, .began, 10, 20)]), from: DeviceIdentity(number: 2, node: node))
        daemon.process(TouchFrame(time: 2, contacts: [contact(5, .moved, 11, 21), contact(6, .began, 30, 40, slot: 1)]), from: DeviceIdentity(number: 2, node: node))
        daemon.process(TouchFrame(time: 3, contacts: [contact(5, .stationary, 11, 21), contact(6, .ended, 30, 40, slot: 1)]), from: DeviceIdentity(number: 2, node: node))
        // The kernel reuses tracking id 6 for the next finger; motiond does not reuse its number.
        daemon.process(TouchFrame(time: 4, contacts: [contact(5, .stationary, 11, 21), contact(6, .began, 50, 60, slot: 1)]), from: DeviceIdentity(number: 2, node: node))
        daemon.process(TouchFrame(time: 5, contacts: [contact(5, .ended, 11, 21), contact(6, .cancelled, 50, 60, slot: 1)]), from: DeviceIdentity(number: 2, node: node))
        daemon.process(TouchFrame(time: 6, contacts: []), from: DeviceIdentity(number: 2, node: node))
        let seen = values(try output.take())
        #expect(seen.count == 5, "landing, moving + second landing, second lift, a new finger, both gone: \(seen)")
        guard seen.count == 5 else { return }
        let first = try #require(seen[0].first?.id)
        #expect(seen[0].map(\.x) == [10] && seen[0][0].device == node)
        #expect(seen[1].map(\.id) == [first, first + 1] && seen[1].map(\.x) == [11, 30])
        #expect(seen[2].map(\.id) == [first])
        #expect(seen[3].map(\.id) == [first, first + 2] && seen[3][1].x == 50, "a new number for the new finger")
        #expect(seen[4].isEmpty, "one empty value when the last finger is gone")

        let reply = try #require(try { daemon.receive(#"{"id": 2, "op": "get", "stream": "screen.contacts"}"#, from: session); return try output.take().first }())
        #expect(reply["result"]?["value"]?.array?.isEmpty == true)
    }

    @Test("nobody subscribed: frames are not looked at for contacts, and nothing is sent")
    func unsubscribed() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["screen.contacts"]}"#, from: session)
        daemon.receive(#"{"id": 2, "op": "unsubscribe", "streams": ["screen.contacts"]}"#, from: session)
        _ = try output.take()
        daemon.process(TouchFrame(time: 1, contacts: [contact(1, .began, 10, 20)]), from: DeviceIdentity(number: 0, node: "n"))
        #expect(values(try output.take()).isEmpty)
        daemon.receive(#"{"id": 3, "op": "get", "stream": "screen.contacts"}"#, from: session)
        let reply = try #require(try output.take().first)
        #expect(reply["result"]?["value"]?.array?.isEmpty == true, "not fed: nothing is known of the finger")
    }

    @Test("listed as kind contacts, matched by *, in the hello")
    func listed() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let hello = try #require(try output.take().first)
        #expect(hello["streams"]?.array?.contains { $0.string == ScreenContacts.name } == true)
        daemon.receive(#"{"id": 1, "op": "list"}"#, from: session)
        let list = try #require(try output.take().first?["result"]?["streams"]?.array)
        #expect(list.first { $0["stream"]?.string == ScreenContacts.name }?["kind"]?.string == "contacts")
        daemon.receive(#"{"id": 2, "op": "subscribe", "streams": ["*"]}"#, from: session)
        _ = try output.take()
        daemon.process(TouchFrame(time: 1, contacts: [contact(1, .began, 10, 20)]), from: DeviceIdentity(number: 0, node: "n"))
        #expect(values(try output.take()).count == 1)
    }
}
