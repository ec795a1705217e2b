import Foundation
import MotionCore
import Testing
import TouchInput
@testable import MotionConfiguration

/// What to believe of a panel that misdescribes itself: `[[device]]` keys and the quirks
/// shipped with motiond.
@Suite("Panel hints and quirks")
struct QuirkTests {
    /// A touchscreen as a recording's header would describe it: 0…32767 at 1 unit/mm.
    static func liar(name: String = "Lying Panel", vendor: UInt16 = 0x1234, product: UInt16 = 0x5678) -> DeviceDescription {
        var device = DeviceDescription(name: name)
        device.vendor = vendor
        device.product = product
        device.properties = [InputProperty.direct]
        device.codes[EventType.absolute] = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
        device.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
        device.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
        device.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: 32767, resolution: 1)
        device.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: 32767, resolution: 1)
        return device
    }

    @Test("resolution, size_mm and touch_resolution are read from [[device]], checked, and believed")
    func deviceKeys() throws {
        let configuration = try Configuration.parse("""
            [[device]]
            name = "Lying*"
            size_mm = [344, 194]
            touch_resolution = 95
            """, file: "kiosk.toml")
        let settings = try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.liar()))?.settings)
        #expect(settings.filters.panel.size == Size(width: 344, height: 194) && settings.filters.panel.touchResolution == 95)
        let resolved = ResolvedContactFilters(settings.filters, device: Self.liar())
        #expect(resolved.geometry.positions == .hinted("the configuration"))
        #expect(resolved.jumpMillimetres == 50)
        expectRefused("[[device]]\nresolution = [10]\n", line: 2, "resolution is [x, y]")
        expectRefused("[[device]]\nresolution = [0, 10]\n", line: 2, "resolution is [x, y]")
        expectRefused("[[device]]\nsize_mm = [300, 200, 1]\n", line: 2, "size_mm is [width, height]")
        expectRefused("[[device]]\nresolution = [10, 10]\nsize_mm = [300, 200]\n", line: 3, "not both")
        expectRefused("[[device]]\ntouch_resolution = -1\n", line: 2, "touch_resolution")
        expectRefused("[[device]]\nresolution = [nan, 10]\n", line: 2, "nan")
    }

    @Test("a geometry hint no touchscreen could have is refused on its line, by the limits a declared size is judged by: sides of 20 mm to 5 m, resolutions within 4× of each other")
    func implausibleHints() throws {
        let sides = PanelGeometry.plausibleSide
        expectRefused("[[device]]\nname = \"x\"\nsize_mm = [1, 1]\n", line: 3, "each between 20 and 5000 (a touchscreen's sides)")
        expectRefused("[[device]]\nsize_mm = [300, 19.9]\n", line: 2, "size_mm is [width, height]")
        expectRefused("[[device]]\nsize_mm = [5000.1, 300]\n", line: 2, "size_mm is [width, height]")
        expectRefused("[[device]]\n\nresolution = [100000, 0.01]\n", line: 3, "no touchscreen's differ by more than 4 times")
        expectRefused("[[device]]\nresolution = [10, 41]\n", line: 2, "a unit 4.1 times longer on one axis than on the other")
        for size in [[sides.lowerBound, sides.upperBound], [1500, 900]] {
            let text = "[[device]]\nsize_mm = [\(size[0]), \(size[1])]\n"
            let parsed = try Configuration.parse(text, file: "kiosk.toml")
            #expect(parsed.devices.first?.filters.panel.size == Size(width: size[0], height: size[1]), "\(text)")
        }
        #expect(try Configuration.parse("[[device]]\nresolution = [10, 40]\n", file: "kiosk.toml").devices.first?.filters.panel.resolution == .init(x: 10, y: 40))
    }

    static let quirks = """
        [[quirk]]
        quirk = "lying panel"
        evidence = "https://example.org/evidence"
        ids = "1234:5678"
        resolution = [95, 169]
        jump_mm = 80

        [[quirk]]
        quirk = "by name"
        evidence = "https://example.org/other"
        name = "Other*"
        palm_size_mm = 0
        infrared = true
        storm_contacts = 200
        """

    @Test("a quirk selects by ids or name, fills in the keys a [[device]] entry leaves out, names itself, and never overrides the entry")
    func quirkApplies() throws {
        var configuration = try Configuration.parse("[[device]]\nids = \"1234:5678\"\njump_mm = 60\n", file: "kiosk.toml")
        configuration.quirks = try Quirk.read(Self.quirks, file: "quirks.toml")
        let settings = try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.liar()))?.settings)
        #expect(settings.quirk == "lying panel")
        #expect(settings.filters.panel.resolution == .init(x: 95, y: 169))
        #expect(settings.filters.jumpMillimetres == 60, "the entry's own jump_mm wins")
        let resolved = ResolvedContactFilters(settings.filters, device: Self.liar())
        #expect(resolved.geometry.positions == .hinted("quirk \"lying panel\""))
        #expect(resolved.quirk == "lying panel")

        var open = Configuration()
        open.quirks = configuration.quirks
        let other = try #require(open.match(DeviceIdentity(number: 0, node: "/dev/input/event4", description: Self.liar(name: "Other Panel", vendor: 1, product: 2)))?.settings)
        #expect(other.quirk == "by name" && other.filters.palmSize == .off)
        #expect(other.filters.phantoms.infrared == true && other.filters.phantoms.stormContacts == 200, "a quirk sets the phantom filters' keys too")
        var ownStorm = try Configuration.parse("[[device]]\nstorm_contacts = 80\ninfrared = false\n", file: "kiosk.toml")
        ownStorm.quirks = configuration.quirks
        let kept = try #require(ownStorm.match(DeviceIdentity(number: 0, node: "/dev/input/event4", description: Self.liar(name: "Other Panel", vendor: 1, product: 2)))?.settings)
        #expect(kept.filters.phantoms.stormContacts == 80 && kept.filters.phantoms.infrared == false, "the entry's own keys win")
        let none = try #require(open.match(DeviceIdentity(number: 0, node: "/dev/input/event5", description: Self.liar(name: "Plain", vendor: 1, product: 2)))?.settings)
        #expect(none.quirk == nil && none.filters == ContactFilterSettings())
        // An entry that sets its own size keeps it.
        var own = try Configuration.parse("[[device]]\nresolution = [10, 10]\n", file: "kiosk.toml")
        own.quirks = configuration.quirks
        #expect(try #require(own.match(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.liar()))?.settings).filters.panel.resolution == .init(x: 10, y: 10))
    }

    @Test("a quirk without a name, evidence, a selector by ids or name, or any setting is refused with its line")
    func quirkRefused() {
        func refused(_ text: String, line: Int, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(sourceLocation: sourceLocation) { _ = try Quirk.read(text, file: "quirks.toml") } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.file == "quirks.toml" && error.line == line && error.message.contains(message)
            }
        }
        refused("[[quirk]]\nevidence = \"x\"\nids = \"1:2\"\njump_mm = 1\n", line: 1, "has a name")
        refused("[[quirk]]\nquirk = \"a\"\nids = \"1:2\"\njump_mm = 1\n", line: 1, "evidence")
        refused("[[quirk]]\nquirk = \"a\"\nevidence = \"x\"\nnode = \"/dev/input/event1\"\njump_mm = 1\n", line: 2, "by ids or name")
        refused("[[quirk]]\nquirk = \"a\"\nevidence = \"x\"\nids = \"1:2\"\n", line: 2, "sets nothing")
        refused("[[quirk]]\nquirk = \"a\"\nevidence = \"x\"\nids = \"1:2\"\ncolour = 1\n", line: 5, "unknown key")
    }

    @Test("the quirks shipped with motiond read, each with evidence that is a public address, and all of them are compiled in")
    func shipped() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/MotionConfiguration/Quirks/quirks.toml")
        let quirks = try Quirk.read(String(contentsOf: file, encoding: .utf8), file: file.path)
        #expect(quirks == Quirk.builtIn)
        #expect(Set(quirks.map(\.name)).count == quirks.count, "names are unique")
        for quirk in quirks { #expect(quirk.evidence.hasPrefix("https://"), "\(quirk.name): \(quirk.evidence)") }
    }
}
