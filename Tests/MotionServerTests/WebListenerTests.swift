import Foundation
import MotionCore
import NIOCore
import NIOEmbedded
import TouchInput
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// One connection to the HTTP and WebSocket listener, set up as the listener sets up the ones
/// it accepts, driven without a socket on a manual clock: a hostile client's bytes in, the
/// server's bytes out, read as a client would. The loop's time is the slow-client rule's clock
/// too, so advancing it passes the rule's 5 s as well as the HTTP deadlines.
final class WebConnection {
    let channel = EmbeddedChannel()
    let loop: EmbeddedEventLoop
    let clients: ClientConnections
    let daemon: Daemon
    /// What the server sent and has not been read yet.
    private var received: [UInt8] = []

    /// The listener is at 127.0.0.1:8765, and answers `hosts` besides.
    init(hosts: [String] = [], origins: [String] = ["http://127.0.0.1:8765"]) throws {
        loop = channel.embeddedEventLoop
        channel.localAddress = try SocketAddress(ipAddress: "127.0.0.1", port: 8765)
        (daemon, _) = try makeDaemon(control: false)
        clients = ClientConnections(daemon: daemon, lock: DaemonLock(), loop: loop, rule: SlowClientRule { [loop] in Double(loop.now.uptimeNanoseconds) / 1e9 })
        try WebServer.configure(channel, connections: clients, access: WebAccess(origins: origins, hosts: hosts))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40000)).wait()
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        guard channel.isActive else { return }
        try channel.writeInbound(ByteBuffer(bytes: bytes))
    }

    /// Everything the server has written since the last call.
    func take() throws -> [UInt8] {
        loop.run()  // the upgrade completes through futures
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else { continue }
            received += buffer.readableBytesView
        }
        defer { received = [] }
        return received
    }

    /// The response to a request, as text: the status line, headers and body.
    func response(to request: String) throws -> String {
        try send(request)
        return String(decoding: try take(), as: UTF8.self)
    }

    /// A GET with `host` as its Host header (none for nil).
    static func get(_ path: String, host: String? = "127.0.0.1:8765", extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\n" + (host.map { "Host: \($0)\r\n" } ?? "") + extra + "\r\n"
    }

    /// A WebSocket handshake for `target` (a path, or the absolute form) with `host` as its Host.
    static func handshake(_ target: String = "/ws", host: String? = "127.0.0.1:8765", extra: String = "") -> String {
        get(target, host: host, extra: extra + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
    }

    /// Opens the WebSocket and reads the hello; fails the test if the server does not switch.
    func upgrade() throws {
        try send(Self.handshake())
        let bytes = try take()
        let end = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("\r\n\r\n".utf8)) }, "no response")
        #expect(bytes.starts(with: Array("HTTP/1.1 101".utf8)), "\(String(decoding: bytes, as: UTF8.self))")
        received = Array(bytes[(end + 4)...])  // the frames after the response, for frames()
        let hello = try frames()
        #expect(hello.first?.opcode == 0x1 && String(decoding: hello.first?.payload ?? [], as: UTF8.self).contains("\"hello\""))
    }

    /// A client frame: masked unless told otherwise, as RFC 6455 asks of clients.
    func sendFrame(_ opcode: UInt8, _ payload: [UInt8] = [], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 0x7) << 4 | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case 0..<126: frame.append(mask | UInt8(payload.count))
        case 126..<65536: frame += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [mask | 127] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        if masked { frame += key }
        frame += payload.enumerated().map { masked ? $1 ^ key[$0 % 4] : $1 }
        try send(frame)
    }

    func sendText(_ text: String) throws { try sendFrame(0x1, Array(text.utf8)) }

    /// The server's frames since the last call (server frames are never masked).
    func frames() throws -> [(opcode: UInt8, payload: [UInt8])] {
        var bytes = try take()[...]
        var frames: [(UInt8, [UInt8])] = []
        while bytes.count >= 2 {
            let opcode = bytes[bytes.startIndex] & 0x0F
            #expect(bytes[bytes.startIndex + 1] & 0x80 == 0, "a server frame is not masked")
            var length = Int(bytes[bytes.startIndex + 1] & 0x7F)
            var header = 2
            if length == 126 {
                length = Int(bytes[bytes.startIndex + 2]) << 8 | Int(bytes[bytes.startIndex + 3])
                header = 4
            } else if length == 127 {
                length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[bytes.startIndex + $1]) }
                header = 10
            }
            guard bytes.count >= header + length else { break }
            frames.append((opcode, Array(bytes.dropFirst(header).prefix(length))))
            bytes = bytes.dropFirst(header + length)
        }
        return frames
    }

    /// The close frame the server sent, as its code (nil for none) and reason; nil if none came.
    func closeFrame() throws -> (code: Int?, reason: String)? {
        guard let close = try frames().last(where: { $0.opcode == 0x8 }) else { return nil }
        guard close.payload.count >= 2 else { return (nil, "") }
        return (Int(close.payload[0]) << 8 | Int(close.payload[1]), String(decoding: close.payload.dropFirst(2), as: UTF8.self))
    }
}

/// Two bytes of a close code, for a client's close frame.
private func closeBody(_ code: Int, _ reason: [UInt8] = []) -> [UInt8] {
    [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
}

@Suite("WebSocket framing (RFC 6455)")
struct WebSocketFramingTests {
    @Test("an unmasked client frame fails the connection with 1002 (5.1)")
    func unmasked() throws {
        let connection = try WebConnection()
        try connection.upgrade()
        try connection.sendFrame(0x1, Array(#"{"id": 1, "op": "stats"}"#.utf8), masked: false)
        let close = try #require(try connection.closeFrame())
        #expect(close.code == 1002, "\(close)")
        #expect(close.reason.contains("masked"))
        #expect(!connection.channel.isActive)
    }

    @Test("a frame with a reserved bit set fails with 1002, each bit (5.2)", arguments: [1, 2, 4] as [UInt8])
    func reservedBits(bit: UInt8) throws {
        let connection = try WebConnection()
        try connection.upgrade()
        try connection.sendFrame(0x1, Array(#"{"id": 1, "op": "stats"}"#.utf8), rsv: bit)
        #expect(try connection.closeFrame()?.code == 1002)
        #expect(!connection.channel.isActive)
    }

    @Test("reserved opcodes fail with 1002, not ignored (5.2)", arguments: [0x3, 0x7, 0xB, 0xF] as [UInt8])
    func reservedOpcodes(opcode: UInt8) throws {
        let connection = try WebConnection()
        try connection.upgrade()
        try connection.sendFrame(opcode, [1, 2, 3])
        let close = try #require(try connection.closeFrame())
        #expect(close.code == 1002)
        #expect(close.reason.contains("reserved opcode"))
    }

    @Test("close codes an endpoint may not send are not echoed: the connection fails with 1002 (7.4)",
          arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535])
    func forbiddenCloseCodes(code: Int) throws {
        let connection = try WebConnection()
        try connection.upgrade()
        try connection.sendFrame(0x8, closeBody(code))
        #expect(try connection.closeFrame()?.code == 1002)
        #expect(!connection.channel.isActive)
    }

    @Test("a valid close code is echoed, and an empty close is answered with an empty one (5.5.1)",
          arguments: [1000, 1001, 1003, 1007, 1011, 1014, 3000, 4999])
    func echoedCloseCodes(code: Int) throws {
        let connection = try WebConnection()
        try connection.upgrade()
        try connection.sendFrame(0x8, closeBody(code, Array("bye".utf8)))
        #expect(try connection.closeFrame()?.code == code)
        #expect(!connection.channel.isActive)
        let silent = try WebConnection()
        try silent.upgrade()
        try silent.sendFrame(0x8)
        let close = try #require(try silent.closeFrame())
        #expect(close.code == nil, "1005 is never sent: an empty close is answered with an empty one")
    }

    @Test("a one-byte close body fails with 1002, a reason that is not UTF-8 with 1007 (5.5.1)")
    func malformedClose() throws {
        let connection = try WebConnection()
        try connection.upgrade()
        try connection.sendFrame(0x8, [0x03])
        #expect(try connection.closeFrame()?.code == 1002)
        let badReason = try WebConnection()
        try badReason.upgrade()
        try badReason.sendFrame(0x8, closeBody(1000, [0xC3, 0x28]))
        #expect(try badReason.closeFrame()?.code == 1007)
    }

    @Test("a 300-byte request in 257 fragments is answered; past 1024 fragments the connection fails with its own reason")
    func fragments() throws {
        let connection = try WebConnection()
        try connection.upgrade()
        let request = Array(#"{"id": 7, "op": "stats"}"#.utf8) + Array(repeating: UInt8(ascii: " "), count: 276)
        let fragments = request.prefix(256).map { [$0] } + [Array(request.dropFirst(256))]
        #expect(fragments.count == 257)
        for (index, fragment) in fragments.enumerated() {
            try connection.sendFrame(index == 0 ? 0x1 : 0x0, fragment, fin: index == fragments.count - 1)
            if index == 100 { try connection.sendFrame(0x9, Array("between".utf8)) }  // control frames may interleave
        }
        let frames = try connection.frames()
        #expect(frames.contains { $0.opcode == 0xA && $0.payload == Array("between".utf8) })
        let reply = try #require(frames.first { $0.opcode == 0x1 })
        let json = try JSONInput(parsing: reply.payload)
        #expect(json["id"]?.number == 7 && json["ok"]?.bool == true, "\(String(decoding: reply.payload, as: UTF8.self))")
        #expect(connection.channel.isActive)

        let many = try WebConnection()
        try many.upgrade()
        try many.sendFrame(0x1, [], fin: false)
        for _ in 0..<WebSocketMessageReader.maximumFragments { try many.sendFrame(0x0, [], fin: false) }
        let close = try #require(try many.closeFrame())
        #expect(close.code == 1008 && close.reason == "a message in more than 1024 fragments", "\(close)")
    }

    @Test("over 64 KiB in fragments fails with 1009; broken fragment sequences with 1002")
    func fragmentErrors() throws {
        let long = try WebConnection()
        try long.upgrade()
        try long.sendFrame(0x1, Array(repeating: 0x20, count: 40_000), fin: false)
        try long.sendFrame(0x0, Array(repeating: 0x20, count: 40_000))
        #expect(try long.closeFrame()?.code == 1009)

        let orphan = try WebConnection()
        try orphan.upgrade()
        try orphan.sendFrame(0x0, [0x20])
        #expect(try orphan.closeFrame()?.code == 1002)

        let interleaved = try WebConnection()
        try interleaved.upgrade()
        try interleaved.sendFrame(0x1, [0x7B], fin: false)
        try interleaved.sendFrame(0x1, [0x7B])
        #expect(try interleaved.closeFrame()?.code == 1002)

        let longPing = try WebConnection()
        try longPing.upgrade()
        try longPing.sendFrame(0x9, Array(repeating: 1, count: 126))
        #expect(try longPing.closeFrame()?.code == 1002)
    }

    @Test("a client that subscribed and went leaves nothing behind: no session, no output, no handler",
          arguments: ["", #"{"id": 1, "op": "stats"}"#, #"{"id": 1, "op": "subscribe", "streams": ["*"]}"#])
    func leavesNothing(request: String) throws {
        weak var handler: WebSocketClientHandler?
        do {
            let connection = try WebConnection()
            try connection.upgrade()
            if !request.isEmpty { try connection.sendText(request) }
            handler = try connection.channel.pipeline.syncOperations.handler(type: WebSocketClientHandler.self)
            #expect(connection.daemon.clientCount == 1)
            try connection.channel.close().wait()
            connection.loop.run()  // NIO removes a closed channel's handlers on the loop
            #expect(connection.daemon.clientCount == 0)
        }
        #expect(handler == nil, "the connection's handler outlived it")
    }

    @Test("pings from a client that does not read wait as one pong, count as behind, and are dropped by the slow-client rule")
    func pingFlood() throws {
        let connection = try WebConnection()
        try connection.upgrade()
        connection.channel.isWritable = false
        connection.channel.pipeline.fireChannelWritabilityChanged()
        for index in 0..<10_000 {
            try connection.sendFrame(0x9, Array(repeating: UInt8(index % 251), count: 125))
        }
        // Nothing was written for the pings while the client did not read, and one pong waits.
        #expect(try connection.frames().isEmpty)
        #expect(connection.clients.anyBehind)
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        let pongs = try connection.frames().filter { $0.opcode == 0xA }
        #expect(pongs.count == 1 && pongs.first?.payload == Array(repeating: UInt8(9999 % 251), count: 125))
        #expect(!connection.clients.anyBehind)

        // Behind again, for too long: the slow-client rule drops it with 1008 once it has
        // been behind 5 s, not before; the check is due just then (not on a period another
        // client started).
        #expect(connection.clients.nextLaggardDeadline == nil)
        connection.loop.advanceTime(by: .seconds(100))
        connection.channel.isWritable = false
        connection.channel.pipeline.fireChannelWritabilityChanged()
        try connection.sendFrame(0x9, [1])
        #expect(connection.clients.nextLaggardDeadline.map { abs($0 - 5) < 1e-6 } == true, "\(String(describing: connection.clients.nextLaggardDeadline))")
        connection.loop.advanceTime(by: .milliseconds(4_990))
        #expect(connection.clients.dropLaggards() == 0)
        #expect(connection.channel.isActive && connection.clients.anyBehind)
        connection.loop.advanceTime(by: .milliseconds(20))
        #expect(connection.clients.nextLaggardDeadline == 0)
        #expect(connection.clients.dropLaggards() == 1)
        #expect(try connection.closeFrame()?.code == 1008)
    }

    @Test("a client that catches up is timed afresh when it falls behind again")
    func behindAgain() throws {
        let connection = try WebConnection()
        try connection.upgrade()
        let drop = { connection.clients.dropLaggards() }
        connection.channel.isWritable = false
        connection.channel.pipeline.fireChannelWritabilityChanged()
        try connection.sendText(#"{"id": 1, "op": "stats"}"#)  // its reply waits
        connection.loop.advanceTime(by: .seconds(4))
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try connection.frames().contains { $0.opcode == 0x1 }, "the reply that waited")
        #expect(!connection.clients.anyBehind)
        connection.channel.isWritable = false
        connection.channel.pipeline.fireChannelWritabilityChanged()
        try connection.sendText(#"{"id": 2, "op": "stats"}"#)
        connection.loop.advanceTime(by: .seconds(4))
        #expect(drop() == 0, "8 s since it first fell behind, but only 4 s behind this time")
        connection.loop.advanceTime(by: .milliseconds(1_010))
        #expect(drop() == 1)
        #expect(!connection.channel.isActive)
    }
}

@Suite("HTTP listener manners")
struct HTTPListenerTests {
    @Test("a request head that never completes is closed after 10 s, not before")
    func slowHead() throws {
        let connection = try WebConnection()
        try connection.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nX-Slow: ")
        connection.loop.advanceTime(by: .milliseconds(9_900))
        #expect(connection.channel.isActive)
        connection.loop.advanceTime(by: .milliseconds(100))
        #expect(!connection.channel.isActive)
    }

    @Test("a connection that never sends a byte is closed after 10 s, and not before")
    func silentConnection() throws {
        let connection = try WebConnection()
        #expect(connection.channel.isActive, "closed before its time began")
        connection.loop.advanceTime(by: .milliseconds(9_900))
        #expect(connection.channel.isActive, "closed before its 10 s")
        connection.loop.advanceTime(by: .milliseconds(100))
        #expect(!connection.channel.isActive)
    }

    @Test("an idle keep-alive connection is closed 10 s after its last response; a request in time is served")
    func idleKeepAlive() throws {
        let connection = try WebConnection()
        #expect(try connection.response(to: WebConnection.get("/motiond.js")).hasPrefix("HTTP/1.1 200"))
        connection.loop.advanceTime(by: .seconds(9))
        #expect(try connection.response(to: WebConnection.get("/")).hasPrefix("HTTP/1.1 200"))
        connection.loop.advanceTime(by: .seconds(9))
        #expect(connection.channel.isActive)
        connection.loop.advanceTime(by: .seconds(1))
        #expect(!connection.channel.isActive)
    }

    @Test("a 200 KB header gets 400 and the connection ends")
    func hugeHeader() throws {
        let connection = try WebConnection()
        let reply = try connection.response(to: "GET / HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nX-Big: " + String(repeating: "a", count: 200_000) + "\r\n\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 400"), "\(reply.prefix(200))")
        connection.loop.advanceTime(by: .seconds(1))
        #expect(!connection.channel.isActive)
    }

    @Test("after a 400 nothing more is answered, even a request pipelined behind it (found by the http fuzzer)")
    func nothingAfterBadRequest() throws {
        let connection = try WebConnection()
        let reply = try connection.response(to: WebConnection.get("/ws") + WebConnection.get("/"))
        #expect(reply.hasPrefix("HTTP/1.1 400") && reply.components(separatedBy: "HTTP/1.1 ").count == 2, "\(reply)")
        #expect(!connection.channel.isActive)
    }

    @Test("pipelined requests from a client that does not read get one response until it reads; it is closed if it never does")
    func pipelinedWithoutReading() throws {
        let connection = try WebConnection()
        connection.channel.isWritable = false
        connection.channel.pipeline.fireChannelWritabilityChanged()
        try connection.send(String(repeating: WebConnection.get("/"), count: 1_000))
        let first = String(decoding: try connection.take(), as: UTF8.self)
        #expect(first.components(separatedBy: "HTTP/1.1 200").count - 1 <= 1, "\(first.count) bytes of responses for a client that does not read")
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        let more = String(decoding: try connection.take(), as: UTF8.self)
        #expect(more.hasPrefix("HTTP/1.1 200"), "reading again, the client is answered")
        // Every one of them, in turn: a response does not nest the next one's on the stack
        // (in a debug build, a thousand nested responses overflowed the test thread's stack).
        let answered = (first + more).components(separatedBy: "HTTP/1.1 200").count - 1
        #expect(answered == 1_000, "\(answered) of 1000 pipelined requests answered")

        let stuck = try WebConnection()
        stuck.channel.isWritable = false
        stuck.channel.pipeline.fireChannelWritabilityChanged()
        try stuck.send(WebConnection.get("/") + WebConnection.get("/"))
        stuck.loop.advanceTime(by: .seconds(10))
        #expect(!stuck.channel.isActive)
    }

    @Test("a Host that does not name the listener gets 421 on every path, the WebSocket included",
          arguments: ["evil.example:8765", "evil.example", "127.0.0.1:9999", "127.0.0.2:8765", "localhost:80", "[::1]:8765", " evil.example "])
    func foreignHost(host: String) throws {
        for path in ["/", "/motiond.js", "/nothing"] {
            let connection = try WebConnection()
            let reply = try connection.response(to: WebConnection.get(path, host: host))
            #expect(reply.hasPrefix("HTTP/1.1 421"), "\(host) \(path): \(reply.prefix(120))")
        }
        let socket = try WebConnection()
        let reply = try socket.response(to: WebConnection.handshake(host: host))
        #expect(reply.hasPrefix("HTTP/1.1 421"), "\(reply.prefix(120))")
    }

    @Test("an HTTP/1.1 request with more than one Host, a Host that is not a host, or none gets 400, the handshake included, and the connection ends (RFC 9112 3.2)",
          arguments: [["127.0.0.1:8765", "127.0.0.1:8765"], ["127.0.0.1:8765", "evil.example:8765"], ["evil.example:8765", "127.0.0.1:8765"],
                      [""], ["a b:8765"], ["127.0.0.1:0"], ["[::1"], ["127.0.0.1:8765, evil.example"], []])
    func badHost(hosts: [String]) throws {
        let lines = hosts.map { "Host: \($0)\r\n" }.joined()
        for request in [WebConnection.get("/", host: nil, extra: lines), WebConnection.handshake(host: nil, extra: lines)] {
            let connection = try WebConnection()
            let reply = try connection.response(to: request)
            #expect(reply.hasPrefix("HTTP/1.1 400"), "\(hosts): \(reply.prefix(160))")
            #expect(!connection.channel.isActive)
        }
    }

    @Test("an HTTP/1.0 request without Host names no host, and gets 421")
    func noHostInHTTP10() throws {
        let connection = try WebConnection()
        #expect(try connection.response(to: "GET / HTTP/1.0\r\n\r\n").hasPrefix("HTTP/1.0 421"))
    }

    @Test("the whitespace around a Host value is not part of it (RFC 9110 5.5)", arguments: [" 127.0.0.1:8765", "127.0.0.1:8765 ", "\t localhost:8765\t "])
    func hostWithWhitespace(host: String) throws {
        let connection = try WebConnection()
        let reply = try connection.response(to: WebConnection.get("/", host: host))
        #expect(reply.hasPrefix("HTTP/1.1 200"), "\(reply.prefix(160))")
        let socket = try WebConnection()
        #expect(try socket.response(to: WebConnection.handshake(host: host)).hasPrefix("HTTP/1.1 101"))
    }

    @Test("an absolute-form target is answered by its authority, the Host header ignored (RFC 9112 3.2.2)",
          arguments: [("http://127.0.0.1:8765/metrics", "127.0.0.1:8765", "200"), ("HTTP://LocalHost:8765/metrics?x=1", "127.0.0.1:8765", "200"),
                      ("http://127.0.0.1:8765/metrics", "evil.example:8765", "200"), ("http://kiosk.local/metrics", "127.0.0.1:8765", "200"),
                      ("http://evil.example:8765/metrics", "127.0.0.1:8765", "421"), ("http://127.0.0.1:9999/metrics", "127.0.0.1:8765", "421"),
                      ("https://127.0.0.1:8765/metrics", "127.0.0.1:8765", "421"), ("http://127.0.0.1:8765/nothing", "127.0.0.1:8765", "404"),
                      ("http://user@127.0.0.1:8765/metrics", "127.0.0.1:8765", "400"), ("http:///metrics", "127.0.0.1:8765", "400")])
    func absoluteForm(target: String, host: String, status: String) throws {
        let connection = try WebConnection(hosts: ["kiosk.local"])
        let reply = try connection.response(to: WebConnection.get(target, host: host))
        #expect(reply.hasPrefix("HTTP/1.1 \(status)"), "\(target): \(reply.prefix(160))")
        #expect(reply.contains("motiond_build_info") == (status == "200"))
    }

    @Test("an absolute-form target with no path is the live page; the WebSocket is at its absolute form too")
    func absoluteFormPages() throws {
        let connection = try WebConnection()
        let page = try connection.response(to: WebConnection.get("http://127.0.0.1:8765"))
        #expect(page.hasPrefix("HTTP/1.1 200") && page.contains("text/html"), "\(page.prefix(160))")
        let socket = try WebConnection()
        #expect(try socket.response(to: WebConnection.handshake("http://localhost:8765/ws")).hasPrefix("HTTP/1.1 101"))
        let foreign = try WebConnection()
        #expect(try foreign.response(to: WebConnection.handshake("http://evil.example:8765/ws")).hasPrefix("HTTP/1.1 421"))
    }

    @Test("the listener's address, localhost and allowed_hosts are answered, in any case",
          arguments: ["127.0.0.1:8765", "localhost:8765", "LocalHost:8765", "kiosk.local:8765", "KIOSK.LOCAL:8765"])
    func ownHost(host: String) throws {
        let connection = try WebConnection(hosts: ["kiosk.local"])
        #expect(try connection.response(to: WebConnection.get("/", host: host)).hasPrefix("HTTP/1.1 200"))
        let socket = try WebConnection(hosts: ["kiosk.local"])
        #expect(try socket.response(to: WebConnection.handshake(host: host)).hasPrefix("HTTP/1.1 101"))
    }

    @Test("a WebSocket is not closed by the request deadline")
    func webSocketOutlivesDeadline() throws {
        let connection = try WebConnection()
        try connection.upgrade()
        connection.loop.advanceTime(by: .seconds(60))
        #expect(connection.channel.isActive)
        try connection.sendText(#"{"id": 2, "op": "stats"}"#)
        #expect(try connection.frames().contains { $0.opcode == 0x1 })
    }

    @Test("Host headers are read as RFC 9110 writes them")
    func hostHeaders() {
        #expect(HostHeader("Kiosk.Local:8765").map { [$0.name, "\($0.port ?? 0)"] } == ["kiosk.local", "8765"])
        #expect(HostHeader("[::1]:8765").map { [$0.name, "\($0.port ?? 0)"] } == ["::1", "8765"])
        #expect(HostHeader("127.0.0.1").map { [$0.name, "\($0.port ?? 0)"] } == ["127.0.0.1", "0"])
        for bad in ["", ":80", "a:", "a:0", "a:65536", "a:8a", "[::1", "[nothost]:80", "a/b", "a b", "a:1:2"] {
            #expect(HostHeader(bad) == nil, "\(bad)")
        }
        #expect(HostHeader.sameAddress("127.0.0.1", "::ffff:127.0.0.1"))
        #expect(!HostHeader.sameAddress("127.0.0.1", "127.0.0.2"))
        #expect(!HostHeader.sameAddress("localhost", "127.0.0.1"))
    }
}
