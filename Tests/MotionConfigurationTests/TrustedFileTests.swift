import Foundation
import Glibc
import Testing
@testable import MotionConfiguration


/// ``TrustedFile``, what `motionctl calibrate --export udev --output` and the state file write
/// by: a new file, or a regular file the writer recognizes, replaced whole; anything else at
/// the path (a link, a FIFO, a device, a configuration) left as it was, and refused.
@Suite("Trusted file writes")
struct TrustedFileTests {
    static let rule = Array("# Written by motionctl calibrate --export udev for \"Panel\" (\"/dev/input/event5\"): test.\nACTION!=\"remove\"\n".utf8)

    private static func directory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-trusted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url.path
    }

    private static func write(_ path: String) throws(TrustedFileError) {
        try TrustedFile(path: path).replace(with: rule, mode: 0o644, recognizing: UdevCalibrationRule.isExported)
    }

    private static func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map(Array.init)
    }

    /// The names in `directory` besides `expected`: a temporary file left behind.
    private static func litter(in directory: String, besides expected: Set<String>) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !expected.contains($0) }
    }

    @Test("a new file, and a rule an export wrote or an empty file replaced, with mode 0644 and no temporary file left")
    func writes() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/61-motiond.rules"
        try Self.write(path)
        #expect(Self.contents(path) == Self.rule)
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o644)
        try Self.write(path)
        #expect(Self.contents(path) == Self.rule, "over a rule an export wrote")
        let empty = directory + "/empty.rules"
        FileManager.default.createFile(atPath: empty, contents: Data())
        try Self.write(empty)
        #expect(Self.contents(empty) == Self.rule)
        #expect(Self.litter(in: directory, besides: ["61-motiond.rules", "empty.rules"]).isEmpty)
    }

    @Test("a configuration, a FIFO, a link to /proc/self/fd/1 or to a file, a directory and a device are left alone and refused, saying what they are")
    func refusals() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = directory + "/motiond.toml"
        let text = Array("[screen]\nwidth = 1920\n".utf8)
        FileManager.default.createFile(atPath: configuration, contents: Data(text))
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let toStandardOutput = directory + "/stdout.rules"
        #expect(symlink("/proc/self/fd/1", toStandardOutput) == 0)
        let toConfiguration = directory + "/configuration.rules"
        #expect(symlink(configuration, toConfiguration) == 0)
        let subdirectory = directory + "/rules.d"
        #expect(mkdir(subdirectory, 0o700) == 0)
        var cases = [(configuration, "a file it did not write"), (fifo, "a FIFO"), (toStandardOutput, "a symbolic link"),
                     (toConfiguration, "a symbolic link"), (subdirectory, "a directory")]
        // A device node as root, as motionctl runs to write /etc/udev/rules.d: /dev/null's numbers, 1:3.
        let device = directory + "/null"
        if getuid() == 0, mknod(device, S_IFCHR | 0o600, dev_t(1 << 8 | 3)) == 0 { cases.append((device, "a character device")) }
        for (path, found) in cases {
            do throws(TrustedFileError) {
                try Self.write(path)
                Issue.record("\(path) was replaced")
            } catch {
                #expect(error.problem == .refused(found: found), "\(path): \(error)")
                #expect(error.description.contains(path), "\(error)")
            }
        }
        #expect(Self.contents(configuration) == text, "the configuration is as it was")
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(toStandardOutput, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
        #expect(Self.litter(in: directory, besides: ["motiond.toml", "fifo", "stdout.rules", "configuration.rules", "rules.d", "null"]).isEmpty)
    }
}
