import FoundationEssentials
import Glibc

/// The `[websocket]` table: the HTTP and WebSocket listener that browser pages use
/// (docs/protocol.md, WebSocket).
public struct WebSocketSettings: Sendable, Hashable {
    /// Where to listen.
    public var listen: ListenAddress
    /// Whether `listen` may be an address other hosts can reach. Off by default: the protocol
    /// has no encryption, and over TCP nobody's identity is known.
    public var allowRemote = false
    /// The `Origin` header values a browser page may connect with; nil means the listener's
    /// own origins (``ListenAddress/ownOrigins``).
    public var allowedOrigins: [String]?
    /// Host names the listener answers to besides its own address and `localhost` (for a
    /// kiosk that opens the page by a name such as `kiosk.local`); any other `Host` gets 421,
    /// so a page on another name that DNS rebinding pointed here is not answered.
    public var allowedHosts: [String] = []
    /// The file the control token was read from, and the token: a WebSocket client that sends
    /// it with `auth` may change things; without a token, no WebSocket client can.
    public var controlTokenFile: String?
    public var controlToken: String?

    public init(listen: ListenAddress) {
        self.listen = listen
    }

    /// The origins a handshake is accepted from, now that the bound port is known.
    public func origins(boundPort: Int) -> [String] {
        allowedOrigins ?? ListenAddress(host: listen.host, port: boundPort).ownOrigins
    }
}

/// A TCP address to listen on: an IPv4 address or an IPv6 one in brackets, and a port
/// (0: any free port, for tests).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address as written, without brackets ("127.0.0.1", "::1").
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads "127.0.0.1:8765", "[::1]:8765" or "localhost:8765" (which is 127.0.0.1); nil
    /// with the reason when the text is none of these.
    public static func parse(_ text: String) -> Result<ListenAddress, ListenAddressError> {
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(ListenAddressError("'\(text)' is not HOST:PORT; an IPv6 address goes in brackets, like \"[::1]:8765\""))
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                return .failure(ListenAddressError("'\(text)' is not HOST:PORT, like \"127.0.0.1:8765\" (an IPv6 address goes in brackets)"))
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (0...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            return .failure(ListenAddressError("'\(portText)' is not a port (0 to 65535) in '\(text)'"))
        }
        let address = host == "localhost" ? "127.0.0.1" : String(host)
        guard Self.family(of: address) != nil else {
            return .failure(ListenAddressError("'\(host)' is not an IP address; write 127.0.0.1, [::1] or the address of one of this machine's interfaces"))
        }
        return .success(ListenAddress(host: address, port: port))
    }

    /// AF_INET or AF_INET6 for a numeric address, nil for anything else.
    static func family(of host: String) -> Int32? {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return AF_INET }
        if inet_pton(AF_INET6, host, &v6) == 1 { return AF_INET6 }
        return nil
    }

    /// Whether only this machine can reach it: 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } == Array(repeating: 0, count: 15) + [1] }
        return false
    }

    /// How a browser names a page served from here: by the address, and for loopback also by
    /// `localhost`, which is what people type.
    public var ownOrigins: [String] {
        let isV6 = Self.family(of: host) == AF_INET6
        var origins = ["http://\(isV6 ? "[\(host)]" : host):\(port)"]
        if isLoopback { origins.append("http://localhost:\(port)") }
        return origins
    }

    public var description: String { Self.family(of: host) == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why a listen address was refused.
public struct ListenAddressError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension Configuration {
    static func readWebSocket(_ table: inout TableReader, file: String) throws(ConfigurationError) -> WebSocketSettings {
        guard let text = try table.string("listen") else {
            throw table.error(nil, "[websocket] needs listen = \"127.0.0.1:8765\" (remove the table to have no listener)")
        }
        var settings: WebSocketSettings
        switch ListenAddress.parse(text) {
        case .success(let address): settings = WebSocketSettings(listen: address)
        case .failure(let error): throw table.error("listen", error.description)
        }
        settings.allowRemote = try table.bool("allow_remote") ?? false
        guard settings.listen.isLoopback || settings.allowRemote else {
            throw table.error("listen", "\(settings.listen.host) can be reached from other machines, and the WebSocket protocol is not encrypted; listen on 127.0.0.1 or [::1], or say allow_remote = true")
        }
        if let origins = try table.strings("allowed_origins") {
            for origin in origins {
                if origin.hasPrefix("file:") {
                    throw table.error("allowed_origins", "pages opened from files send the origin \"null\", and so do sandboxed frames, which any website can make; to allow them anyway, write \"null\" instead of \"\(origin)\"")
                }
                guard origin == "null" || origin == "*" || origin.hasPrefix("http://") || origin.hasPrefix("https://"),
                      !origin.hasSuffix("/"), !origin.dropFirst(8).contains("/") else {
                    throw table.error("allowed_origins", "'\(origin)' is not an origin: write it as a browser sends it, scheme://host[:port] without a path, like \"http://localhost:8765\" (or \"null\", or \"*\" for any)")
                }
            }
            settings.allowedOrigins = origins
        }
        if let hosts = try table.strings("allowed_hosts") {
            for host in hosts {
                guard let named = HostHeader(host), named.port == nil, !host.hasPrefix("[") else {
                    throw table.error("allowed_hosts", "'\(host)' is not a host name: write a name as a browser's address bar shows it, without scheme or port, like \"kiosk.local\" (the listener's own address and localhost are always answered)")
                }
            }
            settings.allowedHosts = hosts.map { $0.lowercased() }
        }
        if let path = try table.string("control_token_file") {
            let resolved = path.hasPrefix("/") ? path : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).path
            settings.controlTokenFile = resolved
            switch readToken(resolved) {
            case .success(let token): settings.controlToken = token
            case .failure(let error): throw table.error("control_token_file", error.description)
            }
        }
        try table.finish()
        return settings
    }

    /// The token in `path`: its text without one trailing newline. Refused when the file
    /// cannot be read, is empty, or others than its owner and group could read it.
    static func readToken(_ path: String) -> Result<String, ListenAddressError> {
        var status = stat()
        guard stat(path, &status) == 0 else {
            return .failure(ListenAddressError("cannot read the token file \(path): \(String(cString: strerror(errno)))"))
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(ListenAddressError("\(path) is not a regular file")) }
        guard status.st_mode & 0o007 == 0 else {
            return .failure(ListenAddressError("anyone on this machine can read the token file \(path) (mode \(String(status.st_mode & 0o777, radix: 8))); chmod 600 or 640 it"))
        }
        guard status.st_size <= 4096, let data = FileManager.default.contents(atPath: path) else {
            return .failure(ListenAddressError("cannot read the token file \(path)\(status.st_size > 4096 ? ": a token is at most 4 KiB" : "")"))
        }
        var token = String(decoding: data, as: UTF8.self)
        if token.hasSuffix("\n") { token.removeLast() }
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            return .failure(ListenAddressError("the token file \(path) must hold one line, the token (e.g. `head -c 32 /dev/urandom | base64 > \(path)`)"))
        }
        return .success(token)
    }
}
