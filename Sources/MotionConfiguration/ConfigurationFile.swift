import Glibc

/// Reads the files a configuration is made of (the main file and its drop-ins) as motiond
/// trusts them: a regular file of at most ``maximumSize`` bytes of UTF-8, or a clear reason.
/// A drop-in directory is writable by whoever packages or deploys for the kiosk, and a
/// mistake there (a FIFO, a link to a device, a log file named `.toml`) must be refused, not
/// block start-up or be read whole into memory.
enum ConfigurationFile {
    /// A configuration is a few kilobytes; a megabyte is a mistake, not a scene.
    static let maximumSize = 1 << 20

    /// The text of `path`, or why it is not a configuration file.
    static func read(_ path: String) -> Result<String, ConfigurationError> {
        func refused(_ reason: String, line: Int = 0) -> Result<String, ConfigurationError> {
            .failure(ConfigurationError(file: path, line: line, message: reason))
        }
        // O_NONBLOCK: opening a FIFO must not wait for a writer. The checks are made on the
        // open descriptor, so what is checked is what is read.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return refused("cannot read the file: \(systemError(errno))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return refused("cannot read the file: \(systemError(errno))") }
        if let kind = notRegular(status.st_mode) { return refused("not a regular file: \(kind)") }
        guard status.st_size <= maximumSize else {
            return refused("larger than 1 MiB (\(status.st_size) bytes): a configuration file is at most 1 MiB")
        }
        // Read to the end, or one byte past the limit (a file that grows while it is read).
        var bytes = [UInt8](repeating: 0, count: min(Int(status.st_size), maximumSize) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= maximumSize else { return refused("larger than 1 MiB: a configuration file is at most 1 MiB") }
                bytes += [UInt8](repeating: 0, count: min(count, maximumSize + 1 - count))
            }
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return refused("cannot read the file: \(systemError(errno))") }
            if got == 0 { break }
            count += got
        }
        let text = bytes[..<count]
        guard let string = String(validating: text, as: UTF8.self) else {
            // A newline byte is never inside a UTF-8 sequence, so lines can be checked alone.
            let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            let line = 1 + (lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0)
            return refused("not UTF-8 text", line: line)
        }
        return .success(string)
    }

    /// What a file that is not regular is, in words; nil for a regular file.
    static func notRegular(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a file"
        }
    }

    /// The files of `directory` whose names end in `suffix`, hidden ones left out, in name
    /// order (bytewise, as systemd sorts drop-ins); nil when there is no such directory.
    static func names(in directory: String, endingIn suffix: String) -> Result<[String]?, ConfigurationError> {
        guard let stream = opendir(directory) else {
            if errno == ENOENT { return .success(nil) }
            return .failure(ConfigurationError(file: directory, line: 0, message: "cannot list the drop-in directory: \(systemError(errno))"))
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(suffix) && !name.hasPrefix(".") { names.append(name) }
        }
        return .success(names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    /// The system's words for `code` ("No such file or directory", "Permission denied").
    static func systemError(_ code: Int32) -> String { String(cString: strerror(code)) }
}
