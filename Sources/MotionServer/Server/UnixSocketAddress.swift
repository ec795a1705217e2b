import Glibc

/// A `sockaddr_un` for `path`, and its length. A leading `@` names the abstract namespace,
/// as systemd writes `NOTIFY_SOCKET`.
public func unixSocketAddress(_ path: String) -> (address: sockaddr_un, length: socklen_t) {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in bytes.prefix(raw.count - 1).enumerated() {
            raw[index] = index == 0 && byte == UInt8(ascii: "@") ? 0 : byte
        }
    }
    let abstract = bytes.first == UInt8(ascii: "@")
    let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
    return (address, socklen_t(length))
}
