import Glibc
import MotionCore

/// The file the scene is kept in across restarts (under /var/lib/motiond), read and written
/// so that a crash or a full disk at any moment leaves either the old file or the new one,
/// whole, and never a mixture.
public struct StateFile: Sendable {
    /// The file's path.
    public var path: String

    /// The state file at `path`.
    public init(path: String) {
        self.path = path
    }

    /// Where a refused file is put aside by ``setAside()``, for an operator to look at.
    public var refusedPath: String { path + ".refused" }

    /// The directory the file is in, which the temporary file must share for the rename to
    /// be atomic, and which is synced for the rename to last.
    var directory: String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    // MARK: Writing

    /// Replaces the file with `state`, atomically: written whole to a new file beside it,
    /// synced, renamed over it, the directory synced. On any failure the temporary file is
    /// removed, the old file stays as it was, and the error names the cause.
    ///
    /// With `limits`, the bytes are first read back as ``read(limits:)`` would, and nothing
    /// is written if they would be refused (``StateFileError/Cause/unreadable``): the file
    /// never holds a scene the next start would throw away.
    public func write(_ state: SceneState, checkedAgainst limits: ValueLimits? = nil) throws(StateFileError) {
        let bytes = state.encoded
        if let limits {
            do { _ = try SceneState(reading: bytes, limits: limits) } catch { throw StateFileError(refused: error, path: path, cause: .unreadable) }
        }
        let (temporary, fd) = try createTemporary()
        var isOpen = true
        do throws(StateFileError) {
            try writeAll(bytes, to: fd, named: temporary)
            guard fsync(fd) == 0 else { throw StateFileError(.sync, temporary, errno: errno) }
            // Closed once whatever close says: after a failed close the descriptor is gone
            // too, and closing it again could close another thread's new file.
            isOpen = false
            guard close(fd) == 0 else { throw StateFileError(.write, temporary, errno: errno) }
            guard rename(temporary, path) == 0 else { throw StateFileError(.rename, path, errno: errno) }
        } catch {
            if isOpen { close(fd) }
            unlink(temporary)
            throw error
        }
        try syncDirectory()
    }

    /// A new file beside the state file, created so that nothing else can have made it
    /// (`O_EXCL`, which also refuses to follow a symbolic link planted in its place) and that
    /// only motiond reads it (mode 0600).
    private func createTemporary() throws(StateFileError) -> (String, CInt) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var attempt = 0
        while true {
            let temporary = "\(directory)/.\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).tmp"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (temporary, fd) }
            attempt += 1
            guard errno == EEXIST, attempt < 8 else { throw StateFileError(.create, temporary, errno: errno) }
        }
    }

    private func writeAll(_ bytes: [UInt8], to fd: CInt, named name: String) throws(StateFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw StateFileError(.write, name, errno: errno)
            }
            offset += written
        }
    }

    private func syncDirectory() throws(StateFileError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StateFileError(.syncDirectory, directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StateFileError(.syncDirectory, directory, errno: errno) }
    }

    // MARK: Reading

    /// The state in the file; nil when there is no file (a first start); or the reason the
    /// file is refused (``StateFileError/Cause/refused``) or could not be read. At most
    /// ``SceneState/maximumBytes`` are read, whatever the file's size.
    public func read(limits: ValueLimits) throws(StateFileError) -> SceneState? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StateFileError(.read, path, errno: errno)
        }
        defer { close(fd) }
        // One byte more than the limit, to know that the file is over it.
        let capacity = SceneState.maximumBytes + 1
        var bytes = [UInt8](repeating: 0, count: capacity)
        var count = 0
        while count < capacity {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, capacity - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw StateFileError(.read, path, errno: errno)
            }
            if got == 0 { break }
            count += got
        }
        bytes.removeSubrange(count...)
        do { return try SceneState(reading: bytes, limits: limits) } catch {
            throw StateFileError(refused: error, path: path)
        }
    }

    /// Removes the temporary files of writes a crash or a power cut cut short (the old file
    /// stayed whole; these are only litter, and would pile up over crashes). Called at start,
    /// before this motiond writes any. Returns how many were removed.
    @discardableResult
    public func removeLeftovers() -> Int {
        guard let entries = opendir(directory) else { return 0 }
        defer { closedir(entries) }
        let prefix = "." + (path.split(separator: "/").last.map(String.init) ?? path) + "."
        var removed = 0
        while let entry = readdir(entries) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix), name.hasSuffix(".tmp"),
                  name.dropFirst(prefix.count).dropLast(4).allSatisfy(\.isHexDigit) else { continue }
            if unlink(directory + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// Moves a refused file to ``refusedPath`` (replacing one put aside before), so that the
    /// daemon can start afresh and an operator can still see what was refused.
    public func setAside() throws(StateFileError) {
        guard rename(path, refusedPath) == 0 else { throw StateFileError(.setAside, path, errno: errno) }
        try syncDirectory()
    }
}

/// Why the state file could not be read or written, naming the step, the path and the
/// system's reason (such as "No space left on device"), or the file's refusal.
public struct StateFileError: Error, Sendable, CustomStringConvertible {
    /// The step that failed.
    public enum Cause: String, Sendable {
        case create = "create", write = "write", sync = "sync", rename = "rename over the state file"
        case syncDirectory = "sync the directory", read = "read", setAside = "set aside"
        /// The scene would make a file this motiond could not read back (too large, say), so
        /// it was not written; see ``StateFileError/refusal``.
        case unreadable = "keep the scene in"
        /// The file was read but its contents are refused; see ``StateFileError/refusal``.
        case refused = "use"
    }

    /// The step that failed, or ``Cause/refused``.
    public var cause: Cause
    /// The file or directory the step was on.
    public var path: String
    /// The system's error number, for a failed system call.
    public var errno: CInt?
    /// Why the contents were refused, for ``Cause/refused``.
    public var refusal: SceneStateError?

    init(_ cause: Cause, _ path: String, errno: CInt) {
        self.cause = cause
        self.path = path
        self.errno = errno
    }

    init(refused: SceneStateError, path: String, cause: Cause = .refused) {
        self.cause = cause
        self.path = path
        self.refusal = refused
    }

    /// What failed and why, in words, as a log line says it.
    public var description: String {
        if let refusal, cause == .unreadable { return "cannot keep the scene in \(path): it would not be read back: \(refusal)" }
        if let refusal { return "the state file \(path) is refused: \(refusal)" }
        let reason = errno.map { String(cString: strerror($0)) } ?? "failed"
        return "cannot \(cause.rawValue) \(path): \(reason)"
    }
}
