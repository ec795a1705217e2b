import Glibc
import MotionCore
import MotionConfiguration

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
    var directory: String { trusted.directory }

    // MARK: Writing

    /// Replaces the file with `state`, whole and atomically: written to a new file beside
    /// it, synced, renamed over it, the directory synced. On any failure the temporary file is
    /// removed, the old file stays as it was, and the error names the cause.
    ///
    /// Only the file this motiond read or wrote is replaced: `expected` is its identity, or
    /// nil when there was none. Anything else found at the path (a file put there since, a
    /// FIFO, a device) is left alone and refused (``StateFileError/Cause/replaced``).
    ///
    /// With `limits`, the bytes are first read back as ``read(limits:)`` would, and nothing
    /// is written if they would be refused (``StateFileError/Cause/unreadable``): the file
    /// never holds a scene the next start would throw away.
    @discardableResult
    public func replace(with state: SceneState, checkedAgainst limits: ValueLimits? = nil, over expected: FileIdentity?) throws(StateFileError) -> StateFileShape {
        let bytes = state.encoded
        if let limits {
            do { _ = try StateContents(reading: bytes, limits: limits) } catch {
                throw StateFileError(path, .unreadable(error))
            }
        }
        let identity: FileIdentity
        do { identity = try trusted.write(bytes, mode: nil, over: expected) } catch { throw StateFileError(error) }
        return StateFileShape(identity: identity, wholeBytes: bytes.count, appendedBytes: 0)
    }

    /// Appends `changes`, which turn `old` (the scene the file holds) into `new`, to the file
    /// `shape` describes, and syncs it: a few lines instead of the whole scene. If the append
    /// fails midway, the file is cut back to where it was; a start would ignore the partial
    /// lines anyway (``StateContents``). A file that is no longer the one `shape` describes
    /// is refused (another) or written whole (the same file, changed by someone).
    public func append(_ changes: [SceneState.Change], from old: SceneState, to new: SceneState, checkedAgainst limits: ValueLimits? = nil,
                       onto shape: StateFileShape) throws(StateFileError) -> StateFileShape {
        let bytes = SceneState.encode(changes, leaving: new.elements.count)
        if let limits {
            do { try StateContents.check(appending: bytes, to: old, gives: new, limits: limits) } catch {
                throw StateFileError(path, .unreadable(error))
            }
        }
        let fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return try replace(with: new, checkedAgainst: limits, over: nil) }
            if errno == ELOOP { throw StateFileError(path, .replaced(found: "a symbolic link was put in place of the file motiond wrote")) }
            throw StateFileError(path, .failed(.write, errno: errno))
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw StateFileError(path, .failed(.write, errno: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG, FileIdentity(status) == shape.identity else {
            throw StateFileError(path, .replaced(found: "\(FileIdentity.kind(of: status)) was put in place of the file motiond wrote"))
        }
        let size = Int(status.st_size)
        guard size == shape.wholeBytes + shape.appendedBytes, size + bytes.count <= SceneState.maximumBytes else {
            return try replace(with: new, checkedAgainst: limits, over: shape.identity)
        }
        do throws(StateFileError) {
            try writeAll(bytes, to: fd, named: path)
            guard fsync(fd) == 0 else { throw StateFileError(path, .failed(.sync, errno: errno)) }
        } catch {
            // Cut back what got written; should even that fail, the next start ignores a
            // write without its closing line.
            if ftruncate(fd, off_t(size)) == 0 { fsync(fd) }
            throw error
        }
        return StateFileShape(identity: shape.identity, wholeBytes: shape.wholeBytes, appendedBytes: shape.appendedBytes + bytes.count)
    }

    /// The temporary file, the writes and the directory's sync are ``TrustedFile``'s, which
    /// `motionctl calibrate --export udev --output` writes by too.
    private var trusted: TrustedFile { TrustedFile(path: path) }

    private func writeAll(_ bytes: [UInt8], to fd: CInt, named name: String) throws(StateFileError) {
        do { try trusted.writeAll(bytes, to: fd, named: name) } catch { throw StateFileError(error) }
    }

    private func syncDirectory() throws(StateFileError) {
        do { try trusted.syncDirectory() } catch { throw StateFileError(error) }
    }

    // MARK: Reading

    /// What the state path holds: nil when there is nothing (a first start); a file with no
    /// scene yet when it is empty; else its contents. Only a regular file is read, and no
    /// open blocks (a FIFO at the path is refused, not waited on). At most
    /// ``SceneState/maximumBytes`` are read, whatever the file's size.
    ///
    /// Throws why the file cannot be used: ``StateFileError/Cause/refused`` for a state file
    /// that is damaged (which may be set aside), and for anything that is not motiond's to
    /// replace (not a regular file, not a state file, not readable) an error whose
    /// ``StateFileError/leavesFileAlone`` is true.
    public func read(limits: ValueLimits) throws(StateFileError) -> StateFileReading? {
        guard let (fd, status) = try openRegularFile() else { return nil }
        defer { close(fd) }
        let identity = FileIdentity(status)
        // One byte more than the limit, to know that the file is over it.
        let capacity = SceneState.maximumBytes + 1
        var bytes = [UInt8](repeating: 0, count: Swift.min(capacity, Int(status.st_size) + 1))
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw StateFileError(path, .failed(.read, errno: errno))
            }
            if got == 0 { break }
            count += got
            // A file that grew since fstat: read on, up to the limit.
            if count == bytes.count, bytes.count < capacity { bytes += [UInt8](repeating: 0, count: Swift.min(capacity - bytes.count, 1 << 20)) }
        }
        bytes.removeSubrange(count...)
        if bytes.isEmpty { return StateFileReading(contents: nil, identity: identity) }
        do { return StateFileReading(contents: try StateContents(reading: bytes, limits: limits), identity: identity) } catch {
            throw StateFileError(path, error.kind == .notAStateFile ? .foreign(error) : .refused(error))
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

    /// Moves a refused file to ``refusedPath`` (replacing a file put aside before), so that
    /// the daemon can start afresh and an operator can still see what was refused. Something
    /// other than a regular file at ``refusedPath`` is left alone, and so the file stays.
    public func setAside() throws(StateFileError) {
        var status = stat()
        if lstat(refusedPath, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw StateFileError(refusedPath, .notRegular(found: FileIdentity.kind(of: status)))
        }
        guard rename(path, refusedPath) == 0 else { throw StateFileError(path, .failed(.setAside, errno: errno)) }
        try syncDirectory()
    }

    /// The file opened for reading with its status, nil when there is none; refused unless
    /// it is a regular file. Neither a link is followed nor a FIFO waited on.
    private func openRegularFile() throws(StateFileError) -> (CInt, stat)? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw StateFileError(path, .notRegular(found: "a symbolic link")) }
            throw StateFileError(path, .failed(.read, errno: errno))
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let reason = errno
            close(fd)
            throw StateFileError(path, .failed(.read, errno: reason))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw StateFileError(path, .notRegular(found: FileIdentity.kind(of: status)))
        }
        return (fd, status)
    }

    /// Removes the file, only if it is a regular file that holds a state file or nothing (a
    /// configuration, a link, a FIFO is refused and left alone); false when there is none.
    public func removeIfStateFile() throws(StateFileError) -> Bool {
        guard let (fd, status) = try openRegularFile() else { return false }
        defer { close(fd) }
        var start = [UInt8](repeating: 0, count: 32)
        let got = start.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard got >= 0 else { throw StateFileError(path, .failed(.read, errno: errno)) }
        start.removeSubrange(got...)
        guard start.isEmpty || StateContents.looksLikeStateFile(start) else {
            throw StateFileError(path, .foreign(SceneStateError(.notAStateFile, "it does not begin as a state file does")))
        }
        // The path must still lead to the file checked.
        var now = stat()
        guard lstat(path, &now) == 0, FileIdentity(now) == FileIdentity(status) else {
            throw StateFileError(path, .replaced(found: "another file was put there meanwhile"))
        }
        guard unlink(path) == 0 else { throw StateFileError(path, .failed(.setAside, errno: errno)) }
        return true
    }

    // MARK: One motiond a file

    /// Where the lock that keeps a second motiond off this file is held.
    public var lockPath: String { path + ".lock" }

    /// Takes the lock that says this motiond keeps its scene in the file, for as long as the
    /// returned lock lives (the kernel lets go of it when the process ends, however it ends).
    /// Throws ``StateFileError/Cause/inUse``, naming the other's process, when another holds
    /// it. Returns nil when no lock can be made beside the file (no such directory, a
    /// read-only one): then no other motiond can hold one either, and writes there fail and
    /// say so.
    public func lock() throws(StateFileError) -> StateFileLock? {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == ELOOP { throw StateFileError(lockPath, .notRegular(found: "a symbolic link")) }
            return nil
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw StateFileError(lockPath, .notRegular(found: FileIdentity.kind(of: status)))
        }
        // flock(2), not fcntl's record locks: those belong to the process, so a second lock
        // taken in the same process would succeed, and closing any descriptor of the file
        // would drop them.
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let reason = errno
            var text = [UInt8](repeating: 0, count: 16)
            let got = text.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            close(fd)
            guard reason == EWOULDBLOCK else { return nil }
            let holder = got > 0 ? Int32(String(decoding: text.prefix(got).prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)) : nil
            throw StateFileError(path, .inUse(holder: holder))
        }
        // The holder's pid in the file, for the next one to name it.
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return StateFileLock(fd)
    }
}

/// The lock of ``StateFile/lock()``: held until this is released.
public final class StateFileLock: @unchecked Sendable {
    private let fd: CInt

    init(_ fd: CInt) {
        self.fd = fd
    }

    deinit { close(fd) }
}

/// The state file as this motiond last read or wrote it: which file, and how its bytes
/// divide between the scene written whole and the changes appended since.
public struct StateFileShape: Equatable, Sendable {
    public var identity: FileIdentity
    public var wholeBytes: Int
    public var appendedBytes: Int
}

/// What ``StateFile/read(limits:)`` found at the state path.
public struct StateFileReading: Sendable {
    /// The file's contents; nil for an empty file (one an operator made, holding no scene).
    public var contents: StateContents?
    /// Which file it was.
    public var identity: FileIdentity

    /// The shape of the file, for the writes that follow.
    public var shape: StateFileShape {
        StateFileShape(identity: identity, wholeBytes: contents?.wholeBytes ?? 0, appendedBytes: contents.map { $0.appendedBytes + $0.cutShortBytes } ?? 0)
    }
}
