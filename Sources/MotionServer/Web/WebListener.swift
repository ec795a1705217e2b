import Logging
import MotionConfiguration
import NIOCore

/// The browsers' listener (HTTP and WebSocket, ``WebServer``) through the daemon's life:
/// what it is configured with, where it really listens, and who it lets in after a reload.
final class WebListener {
    let channel: Channel
    private let access: WebAccess
    private let logger: Logger
    /// In force now, with the address it really listens on.
    private(set) var settings: WebSocketSettings

    /// Where it listens: the port bound for port 0, systemd's address for a passed socket.
    var address: ListenAddress { settings.listen }

    /// The listener is bound: its origins are known now that its port is.
    init(channel: Channel, access: WebAccess, settings: WebSocketSettings, logger: Logger) {
        self.channel = channel
        self.access = access
        self.logger = logger
        var settings = settings
        if let local = channel.localAddress, let host = local.ipAddress, let port = local.port {
            settings.listen = ListenAddress(host: host, port: port)
        }
        self.settings = settings
        apply(settings)
        let bound = settings.listen
        logger.info("websocket on \(bound): the live page is http://\(bound)/, the protocol ws://\(bound)\(WebServer.webSocketPath)")
    }

    /// The listener's settings: `[websocket]`, with `--websocket` overriding where it
    /// listens (and turning it on without the table); nil for no listener. A listener systemd
    /// `passed` (motiond-web.socket) is served even without the table: enabling that unit
    /// asks for it.
    static func settings(_ configuration: Configuration, _ options: DaemonOptions, passed: Bool = false) throws(StartupFailure) -> WebSocketSettings? {
        guard let address = options.websocket else {
            if passed, configuration.websocket == nil { return WebSocketSettings(listen: ListenAddress(host: "127.0.0.1", port: 0)) }
            return configuration.websocket
        }
        var settings = configuration.websocket ?? WebSocketSettings(listen: address)
        settings.listen = address
        guard address.isLoopback || settings.allowRemote else { throw .remoteWebListener(address) }
        return settings
    }

    /// A reload changes who may connect (origins, hosts; the token is the daemon's); where
    /// it listens stays until a restart, since rebinding could lose it.
    func reload(_ configuration: Configuration, _ options: DaemonOptions) {
        guard var settings = try? Self.settings(configuration, options) else {
            return logger.warning("[websocket] is gone from the configuration; the listener stays until motiond restarts")
        }
        if settings.listen != self.settings.listen && settings.listen.port != 0 {
            logger.warning("[websocket] listen changed; it takes effect when motiond restarts, until then motiond listens on \(self.settings.listen)")
        }
        settings.listen = self.settings.listen
        apply(settings)
    }

    private func apply(_ settings: WebSocketSettings) {
        access.origins = settings.origins(boundPort: settings.listen.port)
        access.hosts = settings.allowedHosts
        self.settings = settings
    }
}
