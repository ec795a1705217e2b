import Glibc
import MotionConfiguration

/// Where a TUIO target's datagrams go. A protocol so that tests can record them.
package protocol DatagramSink: AnyObject {
    /// Sends one datagram without waiting; the errno when it could not be sent.
    func send(_ datagram: borrowing [UInt8]) -> Int32?
    /// Closes it; later sends fail.
    func close()
}

/// A UDP socket of its own for one target, never connected: a receiver that is not running
/// makes no error, as with any TUIO source, and one that starts later gets the next frame.
/// Sends never wait: a datagram the socket has no room for is lost, as UDP may lose it
/// anyway, and the next frame's `alive` list recovers from that.
final class UDPSender: DatagramSink {
    private var descriptor: Int32
    private var address = sockaddr_storage()
    private let length: socklen_t
    /// Why the socket could not be made, as an errno.
    private let openError: Int32

    init(_ target: ListenAddress) {
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        var storage = sockaddr_storage()
        let family: Int32
        if inet_pton(AF_INET, target.host, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(target.port).bigEndian)
            withUnsafeBytes(of: v4) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else {
            family = AF_INET6
            _ = inet_pton(AF_INET6, target.host, &v6.sin6_addr)
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(target.port).bigEndian)
            withUnsafeBytes(of: v6) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
        address = storage
        descriptor = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        openError = descriptor < 0 ? errno : 0
    }

    deinit { close() }

    func send(_ datagram: borrowing [UInt8]) -> Int32? {
        guard descriptor >= 0 else { return openError == 0 ? EBADF : openError }
        let sent = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        return sent < 0 ? errno : nil
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}
