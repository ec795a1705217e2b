import Glibc

/// The process's own CPU time, memory, start time and descriptors, read from `/proc` as
/// Prometheus's client libraries read them for their `process_*` metrics.
struct ProcessStatistics: Equatable {
    /// User and system CPU time, in seconds.
    var cpuSeconds: Double
    var residentBytes: Double
    var virtualBytes: Double
    /// When the process started, in seconds since the Unix epoch.
    var startTime: Double
    var openFileDescriptors: Int?
    var maximumFileDescriptors: Int?

    /// The statistics now; nil where `/proc/self` cannot be read.
    static func current() -> ProcessStatistics? {
        guard let stat = readProcFile("/proc/self/stat") else { return nil }
        // The boot time from the clocks, not /proc/stat's btime: the service's ProcSubset=pid
        // hides every file of /proc but the processes'.
        var sinceBoot = timespec()
        clock_gettime(CLOCK_BOOTTIME, &sinceBoot)
        let bootTime = wallClockNow() - (Double(sinceBoot.tv_sec) + Double(sinceBoot.tv_nsec) / 1e9)
        var statistics = parse(stat: stat, bootTime: bootTime, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))),
                               pageSize: Double(sysconf(Int32(_SC_PAGESIZE))))
        statistics?.openFileDescriptors = countEntries("/proc/self/fd")
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(Int32.max) { statistics?.maximumFileDescriptors = Int(limit.rlim_cur) }
        return statistics
    }

    /// Reads `/proc/self/stat` (proc(5)). The command name, in parentheses, may itself hold
    /// spaces and parentheses, so the fields are counted from the last `)`.
    static func parse(stat: String, bootTime: Double, ticksPerSecond: Double, pageSize: Double) -> ProcessStatistics? {
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        // Field 3 (the state) is the first after the name: field N is at N - 3.
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Double? { number - 3 < fields.count ? Double(fields[number - 3]) : nil }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23), let resident = field(24) else {
            return nil
        }
        return ProcessStatistics(cpuSeconds: (user + system) / ticksPerSecond, residentBytes: resident * pageSize, virtualBytes: virtual,
                                 startTime: bootTime + start / ticksPerSecond)
    }

    /// A file of `/proc`, whose size says nothing: read to its end, at most 64 KiB.
    private static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The entries of a directory, `.` and `..` left out (one is the listing's own descriptor).
    private static func countEntries(_ path: String) -> Int? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { count += 1 }
        }
        // The listing's own descriptor is not one of the daemon's.
        return max(0, count - 1)
    }
}

/// Seconds since the Unix epoch now: metrics that say when something happened use it
/// (Prometheus's practice), while the daemon itself keeps time on the monotonic clock.
func wallClockNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
