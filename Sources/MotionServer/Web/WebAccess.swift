import MotionConfiguration
import NIOCore
import NIOHTTP1

/// Who may use the listener, as the configuration in force says: which pages may open the
/// WebSocket, and by which host names. Changed by a reload; read on the loop.
final class WebAccess {
    /// The origins allowed; "*" allows any, "null" pages from files and sandboxed frames.
    var origins: [String]
    /// Host names answered besides the listener's own address and `localhost`
    /// (`[websocket] allowed_hosts`), lowercased.
    var hosts: [String]

    init(origins: [String], hosts: [String] = []) {
        self.origins = origins
        self.hosts = hosts.map { $0.lowercased() }
    }

    /// The path `head` asks for, once its target and `Host` header are found to name this
    /// listener, which the client reached at `local`; else why it is not answered. The rules
    /// are RFC 9112's (3.2, 3.2.2), written down in docs/protocol.md (The listener's manners).
    func target(of head: HTTPRequestHead, local: SocketAddress?) -> RequestTarget {
        // Whatever the target's form, the message itself must be clear about its host: at
        // most one Host, a valid one, and one at all from HTTP/1.1.
        let fields = head.headers["Host"]
        guard fields.count <= 1 else {
            return .unclear("a request names its host once: this one has \(fields.count) Host headers")
        }
        var named: HostHeader?, text = fields.first ?? "(none)", path = Substring(head.uri)
        if let host = fields.first {
            guard let header = HostHeader(fieldValue: host) else {
                return .unclear("the Host header '\(host.prefix(100))' is not a host with an optional port")
            }
            named = header
        } else if (head.version.major, head.version.minor) >= (1, 1) {
            return .unclear("an HTTP/1.1 request names its host in a Host header")
        }
        // The absolute form (`GET http://127.0.0.1:8765/metrics`) names the host itself, and
        // the Host header is then ignored.
        if let absolute = AbsoluteTarget(head.uri) {
            text = "\(absolute.scheme)://\(absolute.authority)"
            guard absolute.scheme == "http" else { return .elsewhere(text) }
            guard let authority = HostHeader(String(absolute.authority)) else {
                return .unclear("the request's target '\(head.uri.prefix(100))' names no host with an optional port")
            }
            (named, path) = (authority, absolute.path)
        }
        guard let named, allows(named, local: local) else { return .elsewhere(text) }
        return .path(String(path.prefix { $0 != "?" }))
    }

    /// Whether `named` is this listener, which the client reached at `local`: by its address
    /// and port, by `localhost`, or by a name in ``hosts``, with the listener's port or none.
    /// A page on another name reached this address through DNS rebinding, and is not
    /// answered (RFC 9110's 421).
    private func allows(_ named: HostHeader, local: SocketAddress?) -> Bool {
        guard let local, let port = local.port else { return false }
        // A missing port is taken as meaning this one (a program's request, not a browser's,
        // which always names a port other than 80); a wrong one is refused.
        guard named.port == nil || named.port == port else { return false }
        if named.name == "localhost" || hosts.contains(named.name) { return true }
        guard let ip = local.ipAddress else { return false }
        return HostHeader.sameAddress(named.name, ip)
    }

    /// Whether a handshake with this `Origin` header may go ahead. Without the header the
    /// client is not a browser page (browsers always send it), and nothing it could say
    /// would be proof of anything.
    func allows(origin: String?) -> Bool {
        guard let origin else { return true }
        return origins.contains("*") || origins.contains(origin)
    }
}

/// What the listener makes of a request's target and `Host` header.
enum RequestTarget: Equatable {
    /// A path this listener is asked for, without the query.
    case path(String)
    /// The request is not clear about which host it is for (400), and why.
    case unclear(String)
    /// The request is for another host (421): the one it names, or "(none)".
    case elsewhere(String)
}

/// A request target in the absolute form, `scheme://authority/path?query` (RFC 9112 3.2.2):
/// what a proxy sends, and any client may.
struct AbsoluteTarget {
    /// Lowercased.
    var scheme: String
    var authority: Substring
    /// From the `/` after the authority, with the query; "/" when there is none.
    var path: Substring

    /// Nil for a target in the origin form (`/path`) or anything not led by a scheme.
    init?(_ target: String) {
        // A scheme holds no ":", so the first one ends it (a plain search: Foundation's
        // range(of:) would bring Foundation proper into the binary).
        guard let colon = target.firstIndex(of: ":"), target[colon...].hasPrefix("://") else { return nil }
        let scheme = target[..<colon]
        // RFC 3986 3.1: a letter, then letters, digits, "+", "-" and ".".
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        let rest = target[target.index(colon, offsetBy: 3)...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        self.scheme = scheme.lowercased()
        authority = rest[..<end]
        path = rest[end...].hasPrefix("/") ? rest[end...] : "/" + rest[end...]
    }
}
