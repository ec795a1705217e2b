import MotionCore
import Testing
import TouchInput
@testable import MotionConfiguration

/// `Configuration.match`: the one answer to "which `[[device]]` entry, quirk and
/// `[[calibration]]` apply to this device", which the input thread, the replay, motionctl's
/// commands on recordings and `devices` all ask.
@Suite("Which configuration applies to a device")
struct DeviceMatchTests {
    static let path = "pci-0000:00:14.0-usb-0:2:1.0"
    static let node = "/dev/input/event5"

    /// A panel every rule below selects: at `path`, on `node`, with ids 0eef:c000 and a name
    /// `*eGalax*` matches.
    static func panel(path: String? = DeviceMatchTests.path, node: String = DeviceMatchTests.node, vendor: UInt16 = 0x0eef) -> DeviceIdentity {
        DeviceIdentity(number: 3, node: node, path: path, name: "eGalax Inc. eGalaxTouch EXC3000", vendor: vendor, product: 0xc000)
    }

    /// A `[[calibration]]` table by `rule`, whose matrix scales by `scale`.
    static func table(_ rule: String, _ scale: Double) -> String {
        "[[calibration]]\n\(rule)\nmatrix = [\(scale), 0, 0, 0, \(scale), 0]\n"
    }

    static let byPath = table("path = \"\(path)\"", 1.1)
    static let byNode = table("node = \"\(node)\"", 1.2)
    static let byIDs = table("ids = \"0eef:c000\"", 1.3)
    static let byName = table("name = \"*eGalax*\"", 1.4)

    /// Every order of `items`.
    static func orders<T>(_ items: [T]) -> [[T]] {
        guard let first = items.first else { return [[]] }
        return orders(Array(items.dropFirst())).flatMap { rest in (0...rest.count).map { var order = rest; order.insert(first, at: $0); return order } }
    }

    @Test("of the [[calibration]] tables that select a device, a path wins, then a node, then ids, then a name, in whatever order they are read")
    func calibrationPrecedence() throws {
        let tables = [Self.byPath, Self.byNode, Self.byIDs, Self.byName]
        #expect(Self.orders(tables).count == 24)
        for order in Self.orders(tables) {
            let configuration = try Configuration.parse(order.joined(), file: "x.toml")
            func calibrated(_ device: DeviceIdentity) throws -> (rule: DeviceSelection.Rule?, scale: Double?) {
                let match = try #require(configuration.match(device))
                #expect(match.mapping.calibration == match.settings.calibration && match.settings.calibration == match.calibration?.matrix)
                return (match.calibrationRule, match.calibration?.matrix.first)
            }
            let all = try calibrated(Self.panel())
            #expect(all.rule == .path(Self.path) && all.scale == 1.1, "\(order)")
            let noPath = try calibrated(Self.panel(path: nil))
            #expect(noPath.rule == .node(Self.node) && noPath.scale == 1.2, "\(order)")
            let idsAndName = try calibrated(Self.panel(path: nil, node: "/dev/input/event9"))
            #expect(idsAndName.rule == .ids(vendor: 0x0eef, product: 0xc000) && idsAndName.scale == 1.3, "\(order)")
            let nameOnly = try calibrated(Self.panel(path: nil, node: "/dev/input/event9", vendor: 1))
            #expect(nameOnly.rule == .name("*eGalax*") && nameOnly.scale == 1.4, "\(order)")
        }
    }

    @Test("of equally specific [[calibration]] tables, the last read wins, a drop-in's over the main file's")
    func lastWinsOnTies() throws {
        let first = Self.table("ids = \"0eef:c000\"", 1.5), second = Self.table("ids = \"0eef:c000\"", 1.6)
        for (text, scale) in [(first + second, 1.6), (second + first, 1.5)] {
            let match = try #require(try Configuration.parse(text, file: "x.toml").match(Self.panel()))
            #expect(match.calibration?.matrix.first == scale && match.mapping.calibration.first == scale)
        }
        let configuration = try Configuration.parse([(text: first, file: "motiond.toml"), (text: second, file: "conf.d/90-calibration.toml")])
        #expect(configuration.match(Self.panel())?.calibration?.matrix.first == 1.6, "the drop-in is read after the main file")
        // A more specific table read first still wins over a later, less specific one.
        let specific = try Configuration.parse(Self.byNode + Self.byIDs, file: "x.toml")
        #expect(specific.match(Self.panel())?.calibrationRule == .node(Self.node))
    }

    @Test("the first [[device]] entry that selects a device applies, named by the most specific of its rules that match; none selecting: not used")
    func firstEntry() throws {
        let configuration = try Configuration.parse("""
            [[device]]
            name = "*eGalax*"
            node = "\(Self.node)"
            rotation = 90
            [[device]]
            path = "\(Self.path)"
            rotation = 180
            """, file: "x.toml")
        let match = try #require(configuration.match(Self.panel()))
        #expect(match.settings.rotation == .clockwise90 && match.mapping.rotation == .clockwise90, "the first entry, though the second's rule is more specific")
        #expect(match.entryRule == .node(Self.node))
        #expect(configuration.match(Self.panel(node: "/dev/input/event9"))?.entryRule == .name("*eGalax*"))
        let second = try #require(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event9", path: Self.path, name: "ELAN")))
        #expect(second.settings.rotation == .upsideDown && second.entryRule == .path(Self.path))
        #expect(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event9", name: "ELAN")) == nil)
        // Without entries every device is used, mapped onto the whole screen, by no rule.
        let open = try #require(Configuration().match(Self.panel()))
        #expect(open.entryRule == nil && open.calibrationRule == nil && open.mapping.outputSize == Configuration.defaultScreen)
    }

    @Test("the matrix is the table's, else the entry's, else udev's, else none; the filters' stuck slop is the tap slop; grab is the entry's")
    func whatApplies() throws {
        let udev = [0.9, 0, 0.05, 0, 0.9, 0.05]
        let entry = "[gestures]\ntap_slop_mm = 4\n[[device]]\ngrab = true\ncalibration = [0.8, 0, 0, 0, 0.8, 0]\n"
        let withTable = try #require(try Configuration.parse(entry + Self.byIDs, file: "x.toml").match(Self.panel(), udevCalibration: udev))
        #expect(withTable.mapping.calibration == [1.3, 0, 0, 0, 1.3, 0])
        let withEntry = try #require(try Configuration.parse(entry, file: "x.toml").match(Self.panel(), udevCalibration: udev))
        #expect(withEntry.mapping.calibration == [0.8, 0, 0, 0, 0.8, 0] && withEntry.calibration == nil)
        #expect(withEntry.filters.stuckSlop.millimetres == 4 && withEntry.settings.filters.stuckSlop.millimetres != 4)
        #expect(withEntry.use.grab && withEntry.use.mapping == withEntry.mapping && withEntry.use.filters == withEntry.filters)
        #expect(Configuration().match(Self.panel(), udevCalibration: udev)?.mapping.calibration == udev)
        #expect(Configuration().match(Self.panel())?.mapping.calibration == OutputMapping.identityCalibration)
    }

    @Test("a recording is read from replay:FILE: a node rule of that name selects it, its file's own path does not, nor does any path rule")
    func recordings() throws {
        let description = DeviceDescription(name: "Recorded Panel")
        let device = DeviceIdentity.recording("/tmp/panel.evemu", description: description)
        #expect(device.node == "replay:/tmp/panel.evemu" && device.path == nil && device.number == 0 && device.name == "Recorded Panel")
        #expect(try Configuration.parse("[[device]]\nnode = \"replay:/tmp/panel.evemu\"\n", file: "x.toml").match(device)?.entryRule == .node("replay:/tmp/panel.evemu"))
        #expect(try Configuration.parse("[[device]]\nnode = \"/tmp/panel.evemu\"\n", file: "x.toml").match(device) == nil)
        #expect(try Configuration.parse("[[device]]\npath = \"/tmp/panel.evemu\"\n", file: "x.toml").match(device) == nil)
    }
}
