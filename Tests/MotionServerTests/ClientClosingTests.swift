import MotionCore
import NIOCore
import NIOEmbedded
import DaemonTestSupport
import Testing
@testable import MotionServer
@testable import MotionDaemon

/// A client connected to a daemon over either transport, without a socket: the handler the
/// Unix socket's listener sets up (``ClientHandler``) or a WebSocket after its handshake
/// (``WebConnection``), on a manual clock that is also the slow-client rule's.
private final class EmbeddedClient {
    let channel: EmbeddedChannel
    let daemon: Daemon
    let clients: ClientConnections
    /// The WebSocket, for one; nil on the Unix socket.
    private let web: WebConnection?
    var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

    init(_ transport: ClientTransport) throws {
        switch transport {
        case .websocket:
            let web = try WebConnection()
            try web.upgrade()
            (channel, daemon, clients, self.web) = (web.channel, web.daemon, web.clients, web)
        case .unix:
            channel = EmbeddedChannel()
            (daemon, _) = try makeDaemon(control: false)
            let loop = channel.embeddedEventLoop
            clients = ClientConnections(daemon: daemon, lock: DaemonLock(), loop: loop, rule: SlowClientRule { Double(loop.now.uptimeNanoseconds) / 1e9 })
            web = nil
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFramer()))
            try channel.pipeline.syncOperations.addHandler(ClientHandler(connections: clients, credentials: nil))
            try channel.connect(to: SocketAddress(unixDomainSocketPath: "/run/motiond.sock")).wait()
        }
    }

    /// Sends one request as the transport frames it.
    func request(_ line: String) throws {
        if let web { return try web.sendText(line) }
        try channel.writeInbound(ByteBuffer(string: line + "\n"))
    }

    /// The client stops reading: its socket takes no more.
    func stopReading() {
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
    }
}

/// How a client's connection ends.
enum ConnectionEnding: String, CaseIterable, CustomTestStringConvertible {
    case peerLeft = "the client closed the connection"
    case tooSlow = "the slow-client rule's check dropped it"
    case daemonStopped = "the daemon said bye as it stopped"

    var testDescription: String { rawValue }
}

@Suite("Closing a client, on either transport")
struct ClientClosingTests {
    @Test("a client whose connection ended, however it ended, is gone from the list of clients and its output stopped",
          arguments: ClientTransport.allCases, ConnectionEnding.allCases)
    func goneFromTheList(transport: ClientTransport, ending: ConnectionEnding) throws {
        let client = try EmbeddedClient(transport)
        let output = try #require(client.daemon.clients.sessions.values.first?.output as? ChannelOutput)
        #expect(client.daemon.clientCount == 1)
        switch ending {
        case .peerLeft:
            try client.channel.close().wait()
        case .tooSlow:
            // Its reply waits; the check nobody calls here runs when the rule's 5 s are up.
            client.stopReading()
            try client.request(#"{"id": 1, "op": "stats"}"#)
            #expect(client.clients.anyBehind)
            client.loop.advanceTime(by: .seconds(5))
            #expect(client.daemon.clientCount == 1, "dropped before its 5 s were up")
            client.loop.advanceTime(by: .milliseconds(100))
            #expect(output.wasDropped)
        case .daemonStopped:
            client.daemon.finish(reason: "the daemon is stopping")
        }
        client.loop.run()
        #expect(client.daemon.clientCount == 0, "the client stayed on the list")
        #expect(output.isClosed, "the output of a connection that ended still writes")
        #expect(!client.channel.isActive)
        #expect(!client.clients.anyBehind)
    }
}
