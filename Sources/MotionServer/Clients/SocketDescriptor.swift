import Glibc
import NIOCore

/// A client's socket, for writing a frame's lines straight to it with one `send(2)`.
///
/// NIO owns the descriptor and does not give it out; what it does give is `getsockopt` on
/// it, and the kernel names every socket with a cookie that is unique while the system runs
/// (`SO_COOKIE`). So the descriptor is found by asking the process's own descriptors for that
/// cookie, and duplicated: the duplicate is motiond's to close, and can never name another
/// client's socket after NIO closes its own (a number NIO closed may be reused at once).
enum SocketDescriptor {
    /// `SO_COOKIE`, which Glibc's Swift module does not export.
    private static let cookieOption: Int32 = 57
    /// Where the last search ended: descriptors are numbered lowest first, so the next
    /// client's is usually the one after. Only read and written on the event loop.
    nonisolated(unsafe) private static var lastFound: Int32 = 2

    /// A duplicate of `channel`'s socket descriptor, or nil when it cannot be found (the
    /// output then goes through NIO, as before).
    static func duplicate(of channel: Channel) -> EventLoopFuture<Int32?> {
        guard let provider = channel as? SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        let future: EventLoopFuture<UInt64> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(cookieOption))
        return future.map { cookie in
            guard let found = find(cookie: cookie) else { return nil }
            lastFound = found
            let copy = fcntl(found, F_DUPFD_CLOEXEC, 3)
            return copy >= 0 ? copy : nil
        }.recover { _ in nil }
    }

    /// The descriptor of the socket with `cookie`: the one after the last found, else any.
    private static func find(cookie: UInt64) -> Int32? {
        if self.cookie(of: lastFound + 1) == cookie { return lastFound + 1 }
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(directory) {
            // The name in place: an entry is only as long as its name, so copying the whole
            // 256-byte d_name could read past the end of the directory's buffer.
            let name = (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self)
            let descriptor = Int32(truncatingIfNeeded: atol(name))
            if descriptor > 2, self.cookie(of: descriptor) == cookie { return descriptor }
        }
        return nil
    }

    private static func cookie(of descriptor: Int32) -> UInt64? {
        var value: UInt64 = 0
        var length = socklen_t(MemoryLayout<UInt64>.size)
        return getsockopt(descriptor, SOL_SOCKET, cookieOption, &value, &length) == 0 ? value : nil
    }
}
