import Foundation
import MotionCore
import MotionServer
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
