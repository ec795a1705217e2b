import FoundationEssentials

extension Configuration {
    /// Where motiond looks when not given `--config`.
    public static let defaultFile = "/etc/motiond/motiond.toml"

    /// The configuration file motiond reads: `given` (its `--config`), else the default file if
    /// it exists; nil for the built-in configuration. One answer for the daemon's start, its
    /// reloads, and motionctl, which must read the file motiond would.
    ///
    /// Always absolute: `stats` reports it, and `motionctl calibrate` writes its drop-in to
    /// `conf.d` beside it from another working directory.
    public static func fileToRead(given: String?) -> String? {
        guard let file = given ?? (FileManager.default.fileExists(atPath: defaultFile) ? defaultFile : nil) else { return nil }
        return absolute(file, in: FileManager.default.currentDirectoryPath)
    }

    /// `path` made absolute against `directory`. `.` parts are dropped, `..` kept: resolving
    /// it by name would disagree with the kernel where a part is a symbolic link.
    public static func absolute(_ path: String, in directory: String) -> String {
        let joined = path.hasPrefix("/") ? path : directory + "/" + path
        return "/" + joined.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }
}
