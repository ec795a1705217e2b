import Foundation
import Testing
@testable import MotionConfiguration

@Suite("[[tuio]] configuration")
struct TUIOSettingsTests {
    static let elements = """
        [[element]]
        id = "card"
        center = [100, 100]
        size = [50, 50]

        [[element]]
        id = "photo"
        center = [300, 100]
        size = [50, 50]

        """

    @Test("targets with their versions, contacts, elements and sources; none without a table")
    func targets() throws {
        #expect(try Configuration.parse(Self.elements, file: "kiosk.toml").tuio.isEmpty)
        let configuration = try Configuration.parse(Self.elements + """
            [[tuio]]
            target = "127.0.0.1:3333"

            [[tuio]]
            target = "[::1]:3334"
            version = "2.0"
            contacts = false
            elements = "*"
            source = "motiond@kiosk-3"

            [[tuio]]
            target = "192.168.1.20:3333"
            elements = ["card", "ph*"]
            """, file: "kiosk.toml")
        let tuio = configuration.tuio
        #expect(tuio.count == 3)
        #expect(tuio[0].target == ListenAddress(host: "127.0.0.1", port: 3333) && tuio[0].version == .v1_1 && tuio[0].contacts)
        #expect(tuio[0].elements.isEmpty && tuio[0].source == TUIOSettings.defaultSource && tuio[0].source.hasPrefix("motiond"))
        #expect(tuio[1].target == ListenAddress(host: "::1", port: 3334) && tuio[1].version == .v2_0 && !tuio[1].contacts)
        #expect(tuio[1].elements == .all && tuio[1].source == "motiond@kiosk-3")
        #expect(tuio[2].elements.includes("card") && tuio[2].elements.includes("photo") && !tuio[2].elements.includes("cards"))
    }

    /// Parses the elements and then `text`, expecting an error on `line`.
    func refused(_ text: String, line: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectRefused(Self.elements + text, line: line, message, sourceLocation: sourceLocation)
    }

    @Test("mistakes are refused with their line")
    func mistakes() {
        // The elements take lines 1 to 9; the [[tuio]] table starts on 10.
        refused("[[tuio]]\nversion = \"1.1\"\n", line: 10, "needs target")
        refused("[[tuio]]\ntarget = \"kiosk.local:3333\"\n", line: 11, "does not look up host names")
        refused("[[tuio]]\ntarget = \"127.0.0.1\"\n", line: 11, "not ADDRESS:PORT")
        refused("[[tuio]]\ntarget = \"127.0.0.1:0\"\n", line: 11, "port 0")
        refused("[[tuio]]\ntarget = \"127.0.0.1:70000\"\n", line: 11, "not ADDRESS:PORT")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nversion = \"3\"\n", line: 12, "\"1.1\" or \"2.0\"")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nversion = 2.0\n", line: 12, "must be a string")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nelements = [\"crad\"]\n", line: 12, "no element is called 'crad' (the elements are: card, photo)")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nelements = \"all\"\n", line: 12, "\"*\" (every element)")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nelements = [1]\n", line: 12, "array of strings")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\ncontacts = false\n", line: 12, "would send nothing")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nsource = \"motiond@café\"\n", line: 12, "printable ASCII")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nsource = \"\"\n", line: 12, "printable ASCII")
        refused("[[tuio]]\ntarget = \"127.0.0.1:3333\"\nport = 3333\n", line: 12, "unknown key 'port'")
        refused(String(repeating: "[[tuio]]\ntarget = \"127.0.0.1:3333\"\n", count: 17), line: 42, "at most 16")
    }

    @Test("a broadcast target is refused on its line with the reason: 255.255.255.255, and each interface's broadcast address as ip(8) lists it")
    func broadcast() throws {
        expectRefused(Self.elements + "[[tuio]]\ntarget = \"255.255.255.255:3333\"\n", line: 11,
                      "255.255.255.255 is the broadcast address of every network: motiond sends TUIO to one receiver")
        // The interfaces' broadcast addresses from another source than the code under test.
        let ip = Process()
        ip.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        ip.arguments = ["-4", "-o", "addr", "show"]
        let pipe = Pipe()
        ip.standardOutput = pipe
        try ip.run()
        let listing = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ip.waitUntilExit()
        for line in listing.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard let brd = words.firstIndex(of: "brd"), brd + 1 < words.count else { continue }
            let name = String(words[1])
            expectRefused(Self.elements + "[[tuio]]\ntarget = \"\(words[brd + 1]):3333\"\n", line: 11, "is the broadcast address of \(name)")
        }
        // An ordinary host on the same network is a target like any other.
        #expect(try Configuration.parse(Self.elements + "[[tuio]]\ntarget = \"192.0.2.20:3333\"\n", file: "kiosk.toml").tuio.count == 1)
    }
}
