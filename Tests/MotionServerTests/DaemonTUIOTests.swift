import Glibc
import MotionCore
import OSCTestSupport
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionServer
@testable import MotionTUIO
@testable import MotionDaemon

/// A UDP socket on a free loopback port, reading with a deadline.
final class UDPReceiver {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        port = Int(UInt16(bigEndian: address.sin_port))
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Reads and drops datagrams until `count` came, each within `seconds` of the one
    /// before, then those already waiting beyond it; returns how many came.
    func drain(until count: Int, seconds: Double) -> Int {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var received = 0
        while received < count, poll(&waiting, 1, Int32(seconds * 1000)) > 0, recv(fd, &buffer, buffer.count, 0) > 0 {
            received += 1
        }
        // A counter short of what was sent shows as a difference.
        while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 { received += 1 }
        return received
    }

    /// The next datagram's messages, or nil when none came within 10 s.
    func next() throws -> [OSCTestDecoder.Message]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return try OSCTestDecoder.bundle(Array(buffer[..<count])).messages
    }
}

@Suite("TUIO from the daemon")
struct DaemonTUIOTests {
    @Test("a daemon with [[tuio]] sends its scene at start and each frame to a real UDP socket, counts them in stats, and says goodbye")
    func daemonSends() throws {
        let receiver = try UDPReceiver()
        let configuration = try Configuration.parse("""
            [[element]]
            id = "card"
            center = [960, 540]
            size = [400, 300]
            [element.draggable]

            [[tuio]]
            target = "127.0.0.1:\(receiver.port)"
            version = "2.0"
            elements = "*"
            """, file: "kiosk.toml")
        let daemon = Daemon(configuration: configuration, clock: ManualFrameClock(now: 10), tuio: TUIOTargets(), controlPolicy: { _ in true })
        daemon.configureSinks()  // started, as DaemonService starts it
        let start = try #require(try receiver.next())
        #expect(start.map(\.address) == ["/tuio2/frm", "/tuio2/tok", "/tuio2/alv"], "the scene as it is at start")
        #expect(start[1].arguments[3] == .float(0.5) && start[1].arguments[4] == .float(0.5))
        func contact(_ phase: TouchPhase, _ x: Double) -> TouchFrame {
            TouchFrame(time: 10.5, contacts: [TouchContact(slot: 0, trackingID: 5, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: x, y: 540))])
        }
        daemon.process(contact(.began, 960), from: testPanel)
        let landing = try #require(try receiver.next())
        #expect(landing.map(\.address) == ["/tuio2/frm", "/tuio2/ptr", "/tuio2/alv"])
        #expect(landing.last?.arguments == [.int(2), .int(1)], "the finger and the card")
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "stats"}"#, from: session)
        let stats = try #require(try output.take().last?["result"]?["tuio"]?.array?.first)
        #expect(stats["target"]?.string == "127.0.0.1:\(receiver.port)" && stats["version"]?.string == "2.0")
        #expect(stats["frames"]?.integer == 2 && stats["datagrams"]?.integer == 2 && stats["failures"]?.integer == 0)
        daemon.finish(reason: "the daemon is stopping")
        let goodbye = try #require(try receiver.next())
        #expect(goodbye.last?.address == "/tuio2/alv" && goodbye.last?.arguments == [], "nothing alive any more")
    }

    @Test("a reload without [[tuio]] says goodbye to the old targets; one with a new table starts it")
    func reload() throws {
        let first = try UDPReceiver(), second = try UDPReceiver()
        func configuration(_ port: Int?) throws -> Configuration {
            try Configuration.parse("[[element]]\nid = \"card\"\ncenter = [1, 1]\nsize = [2, 2]\n"
                + (port.map { "[[tuio]]\ntarget = \"127.0.0.1:\($0)\"\nelements = \"*\"\n" } ?? ""), file: "kiosk.toml")
        }
        let daemon = Daemon(configuration: try configuration(first.port), clock: ManualFrameClock(now: 10), tuio: TUIOTargets(), controlPolicy: { _ in true })
        daemon.configureSinks()  // started, as DaemonService starts it
        _ = try #require(try first.next())
        daemon.reload(try configuration(nil))
        let goodbye = try #require(try first.next())
        #expect(goodbye.filter { $0.arguments.first == .string("alive") }.allSatisfy { $0.arguments.count == 1 })
        daemon.reload(try configuration(second.port))
        let hello = try #require(try second.next())
        #expect(hello.contains { $0.address == "/tuio/2Dobj" && $0.arguments.first == .string("set") })
        #expect(hello.last?.arguments == [.string("fseq"), .int(3)], "frame numbers go on across reloads")
    }
}
