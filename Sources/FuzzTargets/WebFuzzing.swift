import MotionCore
import MotionConfiguration
import MotionServer
import NIOCore
import NIOEmbedded
import MotionDaemon

/// One connection to the HTTP and WebSocket listener, as the listener sets up the ones it
/// accepts, driven without a socket on a manual clock: what the web targets feed.
final class FuzzWebConnection {
    /// One daemon for every input: its clients are read-only, so no input changes the scene.
    nonisolated(unsafe) static let daemon = Daemon(
        configuration: try! Configuration.load(file: repositoryFile("config/motiond.toml")),
        clock: ManualFrameClock(now: 100), controlPolicy: { _ in false })

    let channel = EmbeddedChannel()

    init() {
        channel.localAddress = try! SocketAddress(ipAddress: "127.0.0.1", port: 8765)
        try! serveWebConnection(channel, daemon: Self.daemon, origins: ["http://127.0.0.1:8765"], hosts: ["kiosk.local"])
        try! channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 40000)).wait()
    }

    /// Hands the server `bytes`, as one read, and lets what they started finish.
    func send(_ bytes: some Sequence<UInt8>) {
        guard channel.isActive else { return }
        _ = try? channel.writeInbound(ByteBuffer(bytes: Array(bytes)))
        channel.embeddedEventLoop.run()
    }

    /// What the server wrote since the last call.
    func take() -> [UInt8] {
        channel.embeddedEventLoop.run()
        var bytes: [UInt8] = []
        while let data = try? channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = data { bytes += buffer.readableBytesView }
        }
        return bytes
    }

    /// Moves the connection's clock on.
    func wait(seconds: Int64) {
        channel.embeddedEventLoop.advanceTime(by: .seconds(seconds))
    }

    /// Ends the connection, so its session leaves the daemon.
    func end() {
        _ = try? channel.close().wait()
        _ = try? channel.finish()
        // NIO removes a closed channel's handlers on its loop: until then the channel, its
        // handlers and their output hold each other.
        channel.embeddedEventLoop.run()
    }

    /// The handshake a browser sends for ws://127.0.0.1:8765/ws.
    static let handshake = Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1:8765\r\n\r\n").utf8)
}
