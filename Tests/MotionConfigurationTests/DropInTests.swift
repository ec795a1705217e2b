import Foundation
import MotionCore
@testable import MotionConfiguration
import Testing

@Suite("Configuration drop-ins (conf.d/*.toml)")
struct DropInTests {
    /// A directory holding motiond.toml and conf.d/ with the given files.
    static func directory(main: String, dropIns: [String: String]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-dropins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("conf.d"), withIntermediateDirectories: true)
        try main.write(to: root.appendingPathComponent("motiond.toml"), atomically: true, encoding: .utf8)
        for (name, text) in dropIns {
            try text.write(to: root.appendingPathComponent("conf.d").appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return root.path
    }

    static let main = """
        [daemon]
        frame_rate = 60
        socket = "/run/motiond/motiond.sock"

        [screen]
        width = 1920
        height = 1080

        [[element]]
        id = "card"
        center = [400, 300]
        size = [200, 100]
        """

    @Test("tables merge key by key in name order, arrays of tables are appended, and the files read are listed")
    func merging() throws {
        let root = try Self.directory(main: Self.main, dropIns: [
            "20-screen.toml": "[screen]\nwidth = 3840\n",
            "10-rate.toml": "[daemon]\nframe_rate = 90\n\n[[element]]\nid = \"photo\"\ncenter = [100, 100]\nsize = [50, 50]\n",
            "30-late.toml": "[daemon]\nframe_rate = 144\n\n[[device]]\nname = \"*maXTouch*\"\nrotation = 90\n",
            "notes.txt": "not toml, not read",
            ".hidden.toml": "this is not read either = = =",
        ])
        let configuration = try Configuration.load(file: root + "/motiond.toml")
        #expect(configuration.files == [root + "/motiond.toml", root + "/conf.d/10-rate.toml", root + "/conf.d/20-screen.toml", root + "/conf.d/30-late.toml"])
        #expect(configuration.daemon.frameRate == 144, "the last file that sets a key wins")
        #expect(configuration.daemon.socket == "/run/motiond/motiond.sock", "keys a drop-in leaves alone stay")
        #expect(configuration.screen == Size(width: 3840, height: 1080))
        #expect(configuration.elements.map(\.id) == ["card", "photo"])
        #expect(configuration.devices.count == 1 && configuration.devices[0].rotation == .clockwise90)
    }

    @Test("an error in a drop-in names the drop-in and its line; an id defined twice names both files and lines")
    func errors() throws {
        let typo = try Self.directory(main: Self.main, dropIns: ["50-typo.toml": "\n[screen]\nwidht = 3840\n"])
        #expect(throws: ConfigurationError(file: typo + "/conf.d/50-typo.toml", line: 3, message: "unknown key 'widht' in [screen]")) {
            try Configuration.load(file: typo + "/motiond.toml")
        }
        let range = try Self.directory(main: Self.main, dropIns: ["50-rate.toml": "[daemon]\n\nframe_rate = 0\n"])
        #expect(throws: ConfigurationError(file: range + "/conf.d/50-rate.toml", line: 3, message: "frame_rate must be between 1 and 1000, not 0")) {
            try Configuration.load(file: range + "/motiond.toml")
        }
        let twice = try Self.directory(main: Self.main, dropIns: ["60-card.toml": "# the card again\n[[element]]\nid = \"card\"\ncenter = [1, 1]\nsize = [1, 1]\n"])
        #expect(throws: ConfigurationError(file: twice + "/conf.d/60-card.toml", line: 3, message: "element 'card' is defined twice: first at \(twice)/motiond.toml:10, again here")) {
            try Configuration.load(file: twice + "/motiond.toml")
        }
        let syntax = try Self.directory(main: Self.main, dropIns: ["70-broken.toml": "[screen\n"])
        let error = #expect(throws: ConfigurationError.self) { try Configuration.load(file: syntax + "/motiond.toml") }
        #expect(error?.file == syntax + "/conf.d/70-broken.toml" && error?.line == 1)
        // A reference from a drop-in to an element of the main file works.
        let reference = try Self.directory(main: Self.main, dropIns: ["80-follow.toml": "[[element]]\nid = \"shadow\"\ncenter = [1, 1]\nsize = [1, 1]\n[element.attach]\ndestination = \"card\"\n"])
        #expect(try Configuration.load(file: reference + "/motiond.toml").elements.count == 2)
    }

    @Test("no conf.d, or an empty one, reads the main file alone")
    func none() throws {
        let root = try Self.directory(main: Self.main, dropIns: [:])
        #expect(try Configuration.load(file: root + "/motiond.toml").files == [root + "/motiond.toml"])
        try FileManager.default.removeItem(atPath: root + "/conf.d")
        #expect(try Configuration.load(file: root + "/motiond.toml").elements.map(\.id) == ["card"])
    }
}

/// Configuration files that are not files: each refused with its reason, quickly, and the
/// reason never one of Foundation's.
@Suite("Configuration files that are not files")
struct NotAFileTests {
    /// Loads `file` on a thread of its own, so that a load that blocks (opening a FIFO
    /// without O_NONBLOCK would) fails the test after 10 s instead of hanging the run.
    static func loadError(_ file: String) throws -> ConfigurationError? {
        final class Outcome: @unchecked Sendable { var error: Error? }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do { _ = try Configuration.load(file: file) } catch { outcome.error = error }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 10) == .success, "loading \(file) did not finish within 10 s")
        return outcome.error as? ConfigurationError
    }

    static func expectRefused(_ file: String, _ reason: String, line: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try #require(try loadError(file), "\(file) was accepted", sourceLocation: sourceLocation)
        #expect(error.file == file && error.line == line && error.message.contains(reason), "\(error)", sourceLocation: sourceLocation)
        #expect(!error.description.contains("NSCocoaErrorDomain") && !error.description.contains("Error Domain"), "\(error)", sourceLocation: sourceLocation)
    }

    @Test("a drop-in that is a FIFO is refused at once as a FIFO, not waited on")
    func fifo() throws {
        let root = try DropInTests.directory(main: DropInTests.main, dropIns: [:])
        #expect(mkfifo(root + "/conf.d/50-fifo.toml", 0o644) == 0)
        try Self.expectRefused(root + "/conf.d/50-fifo.toml", "not a regular file: a FIFO")
        #expect(throws: ConfigurationError.self) { try Configuration.load(file: root + "/motiond.toml") }
    }

    @Test("a drop-in linked to /dev/zero is refused as a character device")
    func linkToDevice() throws {
        let root = try DropInTests.directory(main: DropInTests.main, dropIns: [:])
        try FileManager.default.createSymbolicLink(atPath: root + "/conf.d/zero.toml", withDestinationPath: "/dev/zero")
        let error = try #require(try Self.loadError(root + "/motiond.toml"))
        #expect(error.file == root + "/conf.d/zero.toml" && error.message == "not a regular file: a character device", "\(error)")
    }

    @Test("a directory named x.toml, and a main file that is a directory, are refused as directories")
    func directories() throws {
        let root = try DropInTests.directory(main: DropInTests.main, dropIns: [:])
        try FileManager.default.createDirectory(atPath: root + "/conf.d/x.toml", withIntermediateDirectories: false)
        let error = try #require(try Self.loadError(root + "/motiond.toml"))
        #expect(error.file == root + "/conf.d/x.toml" && error.message == "not a regular file: a directory", "\(error)")
        try Self.expectRefused(root + "/conf.d", "not a regular file: a directory")
    }

    @Test("a drop-in over 1 MiB is refused with its size, without reading it; 1 MiB exactly is read")
    func tooLarge() throws {
        let root = try DropInTests.directory(main: DropInTests.main, dropIns: [:])
        let big = root + "/conf.d/big.toml"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, off_t(ConfigurationFile.maximumSize + 1)) == 0)  // sparse: no 1 MiB written
        try Self.expectRefused(big, "larger than 1 MiB (1048577 bytes)")
        // A comment padded to exactly 1 MiB is a configuration like any other.
        let exact = "# " + String(repeating: "x", count: ConfigurationFile.maximumSize - 3) + "\n"
        try exact.write(toFile: big, atomically: true, encoding: .utf8)
        #expect(try Configuration.load(file: root + "/motiond.toml").files.contains(big))
    }

    @Test("a missing file and an unreadable directory say so in the system's words; bytes that are not UTF-8 name their line")
    func reasons() throws {
        let root = try DropInTests.directory(main: DropInTests.main, dropIns: [:])
        try Self.expectRefused(root + "/missing.toml", "cannot read the file: No such file or directory")
        try Data("[screen]\nwidth = 1920\n# caf\u{E9}\n".utf8.map { $0 } + [0xC3, 0x28, 0x0A]).write(to: URL(fileURLWithPath: root + "/conf.d/latin1.toml"))
        let error = try #require(try Self.loadError(root + "/motiond.toml"))
        #expect(error.file == root + "/conf.d/latin1.toml" && error.line == 4 && error.message == "not UTF-8 text", "\(error)")
        try FileManager.default.removeItem(atPath: root + "/conf.d")
        try "not a directory".write(toFile: root + "/conf.d", atomically: true, encoding: .utf8)
        let listing = try #require(try Self.loadError(root + "/motiond.toml"))
        #expect(listing.message == "cannot list the drop-in directory: Not a directory", "\(listing)")
    }
}
