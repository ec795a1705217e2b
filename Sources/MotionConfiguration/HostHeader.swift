import Glibc

/// An HTTP `Host` header read as a name and an optional port (RFC 9110 7.2): `name`,
/// `name:port`, `a.b.c.d:port` or `[v6]:port`. The name is lowercased, an IPv6 address
/// without its brackets.
public struct HostHeader: Equatable {
    public var name: String
    public var port: Int?

    /// Nil for anything else: an empty name, a port that is not 1–65535, stray brackets,
    /// or characters no host name has.
    public init?(_ text: String) {
        let name: Substring, portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            name = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            portText = rest.isEmpty ? nil : rest.dropFirst()
            guard ListenAddress.family(of: String(name)) == AF_INET6 else { return nil }
        } else {
            if let colon = text.firstIndex(of: ":") {
                name = text[..<colon]
                portText = text[text.index(after: colon)...]
            } else {
                (name, portText) = (Substring(text), nil)
            }
            guard !name.isEmpty, name.utf8.allSatisfy({ Self.nameBytes.contains($0) }) else { return nil }
        }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  let port = Int(portText), (1...65535).contains(port) else { return nil }
            self.port = port
        }
        self.name = name.lowercased()
    }

    /// A `Host` header's field value as a request carries it: the host, with the optional
    /// whitespace around it, which is no part of a field's value (RFC 9110 5.5).
    public init?(fieldValue: String) {
        self.init(fieldValue.trimming(" \t"))
    }

    /// What a registered name or an IPv4 address may be made of (letters, digits, `-`, `.`, `_`).
    private static let nameBytes: Set<UInt8> = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._".utf8))

    /// Whether two textual IP addresses are the same address, an IPv4 one also matching its
    /// IPv4-mapped IPv6 form (what a dual-stack socket reports); false when either is a name.
    public static func sameAddress(_ a: String, _ b: String) -> Bool {
        guard let a = bytes(of: a), let b = bytes(of: b) else { return false }
        return a == b
    }

    /// An address as the 16 bytes of IPv6, an IPv4 one mapped (::ffff:a.b.c.d).
    private static func bytes(of address: String) -> [UInt8]? {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return Array(repeating: 0, count: 10) + [0xFF, 0xFF] + withUnsafeBytes(of: &v4) { Array($0) }
        }
        if inet_pton(AF_INET6, address, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
