import Glibc

/// A socket path that does not fit in a `sockaddr_un`.
public struct SocketPathTooLong: Error, CustomStringConvertible {
    public var path: String
    /// The longest path that fits, in bytes.
    public static let maximum = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
    public var description: String {
        "the socket path \(path) is \(path.utf8.count) bytes; a Unix socket path has at most \(Self.maximum) (choose a shorter one)"
    }
}

/// A `sockaddr_un` for `path`, and its length. A leading `@` names the abstract namespace,
/// as systemd writes `NOTIFY_SOCKET`. Throws for a path longer than `sun_path` holds: cut
/// short, it would name another file.
public func unixSocketAddress(_ path: String) throws(SocketPathTooLong) -> (address: sockaddr_un, length: socklen_t) {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count <= SocketPathTooLong.maximum else { throw SocketPathTooLong(path: path) }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.enumerated() {
            raw[index] = index == 0 && byte == UInt8(ascii: "@") ? 0 : byte
        }
    }
    let abstract = bytes.first == UInt8(ascii: "@")
    let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
    return (address, socklen_t(length))
}
