import Glibc

/// A file motiond or motionctl replaces, often as root, written so that what is at its path
/// is never something else made into it: the state file, and the udev rule `motionctl
/// calibrate --export udev --output` writes.
///
/// The rules: the new contents go to a private temporary file beside the path (created with
/// `O_EXCL`, mode 0600, so nothing else can have made it or read it meanwhile), synced, then
/// put in place by `link(2)` where there was nothing, or by `rename(2)` over a regular file
/// that the caller recognizes as its own. A symbolic link is never followed (to
/// `/proc/self/fd/1`, to a configuration), and a FIFO, a device or a directory at the path is
/// left alone and refused, as is a regular file the caller does not recognize. A crash or a
/// full disk leaves the old file whole.
public struct TrustedFile: Sendable {
    /// The file's path.
    public var path: String

    public init(path: String) {
        self.path = path
    }

    /// The directory the file is in, which the temporary file must share for the rename to
    /// be atomic, and which is synced for the rename to last.
    package var directory: String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    /// How many bytes of a file at the path ``replace(with:mode:recognizing:)`` shows the
    /// caller to decide whether it is one it may replace.
    public static let recognizedBytes = 128

    /// Replaces the file at the path with `bytes`, readable as `mode` once in place. Where
    /// something is there already, only a regular file whose first bytes (at most
    /// ``recognizedBytes``; none for an empty file) `recognizes` accepts is replaced; anything
    /// else is refused (``TrustedFileError/Problem/refused(found:)``) and left as it was.
    public func replace(with bytes: [UInt8], mode: mode_t, recognizing recognizes: ([UInt8]) -> Bool) throws(TrustedFileError) {
        _ = try write(bytes, mode: mode, over: try recognizedFile(recognizes))
    }

    /// Replaces the file at the path with `bytes`, whole and atomically: written to a new file
    /// beside it (readable as `mode`, if given), synced, moved over the file `expected` only
    /// (``moveIntoPlace(_:over:)``), the directory synced. On any failure the new file is
    /// removed, the old one stays as it was, and the error names the step. Returns the new
    /// file's identity (the state file's keeper knows its file by it).
    package func write(_ bytes: [UInt8], mode: mode_t?, over expected: FileIdentity?) throws(TrustedFileError) -> FileIdentity {
        let (temporary, fd) = try createTemporary()
        var isOpen = true
        let identity: FileIdentity
        do throws(TrustedFileError) {
            try writeAll(bytes, to: fd, named: temporary)
            if let mode, fchmod(fd, mode) != 0 { throw TrustedFileError(temporary, .failed(.write, errno: errno)) }
            guard fsync(fd) == 0 else { throw TrustedFileError(temporary, .failed(.sync, errno: errno)) }
            var status = stat()
            guard fstat(fd, &status) == 0 else { throw TrustedFileError(temporary, .failed(.write, errno: errno)) }
            identity = FileIdentity(status)
            // Closed once whatever close says: after a failed close the descriptor is gone
            // too, and closing it again could close another thread's new file.
            isOpen = false
            guard close(fd) == 0 else { throw TrustedFileError(temporary, .failed(.write, errno: errno)) }
            try moveIntoPlace(temporary, over: expected)
        } catch {
            if isOpen { close(fd) }
            unlink(temporary)
            throw error
        }
        try syncDirectory()
        return identity
    }

    /// The identity of the file at the path if it is a regular file `recognizes` accepts; nil
    /// when there is nothing there. Throws for anything else, which is never opened: opening a
    /// device can do something (a tape rewinds), and opening a FIFO waits for a writer.
    private func recognizedFile(_ recognizes: ([UInt8]) -> Bool) throws(TrustedFileError) -> FileIdentity? {
        var found = stat()
        if lstat(path, &found) != 0 {
            guard errno == ENOENT else { throw TrustedFileError(path, .failed(.read, errno: errno)) }
            return nil
        }
        guard found.st_mode & S_IFMT == S_IFREG else { throw TrustedFileError(path, .refused(found: FileIdentity.kind(of: found))) }
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw TrustedFileError(path, errno == ELOOP ? .refused(found: "a symbolic link") : .failed(.read, errno: errno)) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw TrustedFileError(path, .failed(.read, errno: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG, FileIdentity(status) == FileIdentity(found) else {
            throw TrustedFileError(path, .refused(found: "\(FileIdentity.kind(of: status)), put there meanwhile"))
        }
        var start = [UInt8](repeating: 0, count: Self.recognizedBytes)
        let got = start.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard got >= 0 else { throw TrustedFileError(path, .failed(.read, errno: errno)) }
        start.removeSubrange(got...)
        guard recognizes(start) else { throw TrustedFileError(path, .refused(found: "a file it did not write")) }
        return FileIdentity(status)
    }

    /// Puts `temporary` at the path: where there was nothing, only if nothing appeared
    /// meanwhile; else over the file `expected` only.
    private func moveIntoPlace(_ temporary: String, over expected: FileIdentity?) throws(TrustedFileError) {
        var status = stat()
        if lstat(path, &status) != 0 {
            guard errno == ENOENT else { throw TrustedFileError(path, .failed(.rename, errno: errno)) }
            // Nothing there: link(2), unlike rename(2), fails if something appears meanwhile.
            guard link(temporary, path) == 0 else {
                if errno == EEXIST { throw TrustedFileError(path, .changedMeanwhile(.appeared(kind: nil))) }
                throw TrustedFileError(path, .failed(.rename, errno: errno))
            }
            unlink(temporary)
            return
        }
        guard let expected else { throw TrustedFileError(path, .changedMeanwhile(.appeared(kind: FileIdentity.kind(of: status)))) }
        guard status.st_mode & S_IFMT == S_IFREG, FileIdentity(status) == expected else {
            throw TrustedFileError(path, .changedMeanwhile(.replaced(kind: FileIdentity.kind(of: status))))
        }
        guard rename(temporary, path) == 0 else { throw TrustedFileError(path, .failed(.rename, errno: errno)) }
    }

    /// A new file beside the path, created so that nothing else can have made it (`O_EXCL`,
    /// which also refuses to follow a symbolic link planted in its place) and that only its
    /// writer reads it (mode 0600). Hidden, so that udev and the configuration loader skip it.
    private func createTemporary() throws(TrustedFileError) -> (String, CInt) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var attempt = 0
        while true {
            let temporary = "\(directory)/.\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).tmp"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (temporary, fd) }
            attempt += 1
            guard errno == EEXIST, attempt < 8 else { throw TrustedFileError(temporary, .failed(.create, errno: errno)) }
        }
    }

    package func writeAll(_ bytes: [UInt8], to fd: CInt, named name: String) throws(TrustedFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw TrustedFileError(name, .failed(.write, errno: errno))
            }
            offset += written
        }
    }

    package func syncDirectory() throws(TrustedFileError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw TrustedFileError(directory, .failed(.syncDirectory, errno: errno)) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw TrustedFileError(directory, .failed(.syncDirectory, errno: errno)) }
    }
}

/// Why a ``TrustedFile`` was not written: the path, and a step the system refused (with its
/// reason) or what was found there instead of a file that may be replaced.
public struct TrustedFileError: Error, Sendable, CustomStringConvertible {
    /// A step of writing the file, as a message names it ("cannot sync …").
    public enum Step: String, Sendable {
        case create = "create", write = "write", sync = "sync", rename = "rename into place"
        case syncDirectory = "sync the directory", read = "read"
    }

    public enum Problem: Sendable, Equatable {
        /// The system refused a step, with its error number.
        case failed(Step, errno: CInt)
        /// Something is at the path that is not to be replaced: left alone.
        case refused(found: String)
        /// The path changed while the new file was written: left alone.
        case changedMeanwhile(Change)
    }

    /// How the path changed while the new file was written: its callers each word it.
    public enum Change: Sendable, Equatable {
        /// Something appeared where nothing was (`kind` unknown when `link(2)` met it).
        case appeared(kind: String?)
        /// Something took the place of the file that was checked.
        case replaced(kind: String)
    }

    public var path: String
    public var problem: Problem

    package init(_ path: String, _ problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .failed(let step, let errno): "cannot \(step.rawValue) \(path): \(String(cString: strerror(errno)))"
        case .refused(let found): "\(path) is \(found): left alone"
        case .changedMeanwhile(.appeared(nil)): "\(path) is something that was put there meanwhile: left alone"
        case .changedMeanwhile(.appeared(let kind?)): "\(path) is \(kind), put there meanwhile: left alone"
        case .changedMeanwhile(.replaced(let kind)): "\(path) is \(kind), put in place of the file that was there: left alone"
        }
    }
}

/// Which file a path led to (its device and inode), to tell the file motiond wrote from one
/// put in its place.
public struct FileIdentity: Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// What kind of file `status` describes, in words.
    package static func kind(of status: stat) -> String {
        switch status.st_mode & S_IFMT {
        case S_IFREG: return "another file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "something that is not a regular file"
        }
    }
}
