import Foundation
import MotionCore
import Testing
@testable import TouchInput

@Suite("Coordinate mapping")
struct MappingTests {
    /// An 800 × 480-unit panel (0…799, 0…479), like the Atmel maXTouch in the recordings.
    static let x = AxisInfo(minimum: 0, maximum: 799)
    static let y = AxisInfo(minimum: 0, maximum: 479)

    static func map(_ px: Int32, _ py: Int32, _ mapping: OutputMapping) -> Point {
        CoordinateMapper(xAxis: x, yAxis: y, mapping: mapping).pixels(x: px, y: py)
    }

    static let landscape = Size(width: 1920, height: 1080)
    static let portrait = Size(width: 1080, height: 1920)

    @Test("unrotated: the axis range (max − min + 1 units) spans the output")
    func identity() {
        #expect(Self.map(400, 240, OutputMapping(outputSize: Self.landscape)) == Point(x: 960, y: 540))
        #expect(Self.map(0, 0, OutputMapping(outputSize: Self.landscape)) == Point(x: 0, y: 0))
        #expect(Self.map(799, 479, OutputMapping(outputSize: Self.landscape)).distance(to: Point(x: 1917.6, y: 1077.75)) < 1e-9)
        // With no output size, one pixel per unit: unit n is pixel n.
        #expect(Self.map(340, 242, OutputMapping()) == Point(x: 340, y: 242))
    }

    @Test("rotations and flips, with exact numbers", arguments: [
        // (200, 120) is (0.25, 0.25) of the panel.
        (OutputMapping(outputSize: MappingTests.portrait, rotation: .clockwise90), Point(x: 810, y: 480)),
        (OutputMapping(outputSize: MappingTests.landscape, rotation: .upsideDown), Point(x: 1440, y: 810)),
        (OutputMapping(outputSize: MappingTests.portrait, rotation: .clockwise270), Point(x: 270, y: 1440)),
        (OutputMapping(outputSize: MappingTests.landscape, flipHorizontal: true), Point(x: 1440, y: 270)),
        (OutputMapping(outputSize: MappingTests.landscape, flipVertical: true), Point(x: 480, y: 810)),
        // Flips apply before the rotation: mirrored to (0.75, 0.25), then turned to (0.75, 0.75).
        (OutputMapping(outputSize: MappingTests.portrait, rotation: .clockwise90, flipHorizontal: true), Point(x: 810, y: 1440)),
        // A calibration that shrinks the panel into the middle half of the screen.
        (OutputMapping(outputSize: MappingTests.landscape, calibration: [0.5, 0, 0.25, 0, 0.5, 0.25]), Point(x: 720, y: 405)),
        // libinput's 90° matrix does what rotation 90 does.
        (OutputMapping(outputSize: MappingTests.portrait, calibration: [0, -1, 1, 1, 0, 0]), Point(x: 810, y: 480)),
    ])
    func transforms(mapping: OutputMapping, expected: Point) {
        let point = Self.map(200, 120, mapping)
        #expect(Swift.abs(point.x - expected.x) < 1e-9 && Swift.abs(point.y - expected.y) < 1e-9, "\(point)")
    }

    @Test("an output at (1920, 0) puts the panel on the right-hand display of a 3840 × 1080 screen, after calibration, flips and rotation")
    func outputOrigin() {
        let right = OutputMapping(outputSize: Self.landscape, outputOrigin: Point(x: 1920, y: 0))
        #expect(Self.map(0, 0, right) == Point(x: 1920, y: 0))
        #expect(Self.map(400, 240, right) == Point(x: 2880, y: 540))
        #expect(CoordinateMapper(xAxis: Self.x, yAxis: Self.y, mapping: right).outputRect == Rect(x: 1920, y: 0, width: 1920, height: 1080))
        // The whole chain, in its documented order, on (200, 120) = (0.25, 0.25) of the panel:
        // calibration (0.5·u + 0.1, 0.5·v + 0.2) → (0.225, 0.325); flip horizontal → (0.775,
        // 0.325); 90° clockwise → (1 − 0.325, 0.775) = (0.675, 0.775); onto a 1080 × 1920
        // portrait display that starts at (1920, 0) → (1920 + 729, 1488).
        let chained = OutputMapping(
            outputSize: Self.portrait, outputOrigin: Point(x: 1920, y: 0), rotation: .clockwise90,
            flipHorizontal: true, calibration: [0.5, 0, 0.1, 0, 0.5, 0.2])
        let point = Self.map(200, 120, chained)
        #expect(Swift.abs(point.x - 2649) < 1e-9 && Swift.abs(point.y - 1488) < 1e-9, "\(point)")
        // Millimetres stay the panel's, wherever its output is.
        let panel = CoordinateMapper(xAxis: AxisInfo(minimum: 0, maximum: 1999, resolution: 10), yAxis: AxisInfo(minimum: 0, maximum: 999, resolution: 10), mapping: right)
        #expect(panel.millimetres(x: 100, y: 100) == Point(x: 10, y: 10))
    }

    @Test("a quarter turn with no output size swaps the axes' extents")
    func rotatedDefaultSize() {
        let mapper = CoordinateMapper(xAxis: Self.x, yAxis: Self.y, mapping: OutputMapping(rotation: .clockwise90))
        #expect(mapper.outputSize == Size(width: 480, height: 800))
        #expect(mapper.pixels(x: 340, y: 240) == Point(x: 240, y: 340))
    }

    @Test("millimetres use each axis's resolution, so a 45° path is 45° on an anisotropic panel")
    func anisotropic() throws {
        let mapper = CoordinateMapper(
            xAxis: AxisInfo(minimum: 0, maximum: 1999, resolution: 20),
            yAxis: AxisInfo(minimum: 0, maximum: 999, resolution: 10))
        let a = try #require(mapper.millimetres(x: 0, y: 0))
        let b = try #require(mapper.millimetres(x: 200, y: 100))
        #expect(b == Point(x: 10, y: 10))
        #expect(Swift.abs(atan2(b.y - a.y, b.x - a.x) - Double.pi / 4) < 1e-12)
        // In raw units the same path would be 26.6°: the reason to work in millimetres.
        #expect(Swift.abs(atan2(100.0, 200.0) - Double.pi / 4) > 0.3)
    }

    @Test("millimetres turn with the picture, and are unknown without a resolution")
    func millimetresOrientation() {
        let mapper = CoordinateMapper(
            xAxis: AxisInfo(minimum: 0, maximum: 1999, resolution: 20),
            yAxis: AxisInfo(minimum: 0, maximum: 999, resolution: 10),
            mapping: OutputMapping(rotation: .clockwise90))
        let mm = mapper.millimetres(x: 200, y: 100)!
        #expect(Swift.abs(mm.x - (99.9 - 10)) < 1e-9 && Swift.abs(mm.y - 10) < 1e-9)
        let unknown = CoordinateMapper(xAxis: Self.x, yAxis: Self.y)
        #expect(!unknown.hasMillimetres)
        #expect(unknown.millimetres(x: 1, y: 1) == nil)
    }

    @Test("calibration matrices parse as udev writes them")
    func parseCalibration() {
        #expect(OutputMapping.parseCalibration("1 0 0 0 1 0") == OutputMapping.identityCalibration)
        #expect(OutputMapping.parseCalibration("0 -1 1  1 0 0") == [0, -1, 1, 1, 0, 0])
        #expect(OutputMapping.parseCalibration("1 2 3") == nil)
        #expect(OutputMapping.parseCalibration("a b c d e f") == nil)
        #expect(OutputMapping.parseCalibration("1 0 0 0 1 nan") == nil)
    }
}

@Suite("Device selection")
struct DeviceSelectionTests {
    static let atmel: DeviceDescription = {
        var device = DeviceDescription(name: "Atmel maXTouch Touchscreen")
        device.vendor = 0x03eb
        device.product = 0x8a1c
        return device
    }()

    @Test("no rules selects everything; any matching rule selects")
    func rules() {
        #expect(DeviceSelection().selects(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.atmel)))
        #expect(DeviceSelection([.name("*maXTouch*")]).selects(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.atmel)))
        #expect(!DeviceSelection([.name("ELAN*")]).selects(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.atmel)))
        #expect(DeviceSelection([.name("ELAN*"), .node("/dev/input/event3")]).selects(DeviceIdentity(number: 0, node: "/dev/input/event3", description: Self.atmel)))
        #expect(DeviceSelection([DeviceSelection.parseIDs("03eb:8a1c")!]).selects(DeviceIdentity(number: 0, node: "/dev/input/event9", description: Self.atmel)))
        #expect(!DeviceSelection([DeviceSelection.parseIDs("04f3:010c")!]).selects(DeviceIdentity(number: 0, node: "/dev/input/event9", description: Self.atmel)))
    }

    @Test("device names use the streams' glob dialect: * and ? only, so brackets in a name match themselves")
    func nameGlobs() {
        var bracketed = Self.atmel
        bracketed.name = "ILITEK [2.0] Touch"
        #expect(DeviceSelection([.name("ILITEK [2.0] Touch")]).selects(DeviceIdentity(number: 0, node: "n", description: bracketed)))
        #expect(DeviceSelection([.name("ILITEK [?.?]*")]).selects(DeviceIdentity(number: 0, node: "n", description: bracketed)))
        // fnmatch(3) would read [2.0] as a character class and match "ILITEK 2 Touch" instead.
        var classed = Self.atmel
        classed.name = "ILITEK 2 Touch"
        #expect(!DeviceSelection([.name("ILITEK [2.0] Touch")]).selects(DeviceIdentity(number: 0, node: "n", description: classed)))
    }

    @Test("vendor:product is two hexadecimal numbers")
    func parseIDs() {
        #expect(DeviceSelection.parseIDs("04f3:010c") == .ids(vendor: 0x04f3, product: 0x010c))
        #expect(DeviceSelection.parseIDs("4f3:10c") == .ids(vendor: 0x04f3, product: 0x010c))
        for bad in ["04f3", "04f3:", "zz:01", "12345:1", "1:2:3"] {
            #expect(DeviceSelection.parseIDs(bad) == nil, "\(bad)")
        }
    }
}

@Suite("umockdev export")
struct UmockdevExportTests {
    static func answers(_ ioctl: String) -> [String: (result: Int, bytes: [UInt8])] {
        var answers: [String: (Int, [UInt8])] = [:]
        for line in ioctl.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            let hex = Array(fields[2])
            let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0...$0 + 1]), radix: 16)! }
            answers[String(fields[0])] = (Int(fields[1])!, bytes)
        }
        return answers
    }

    @Test("the ioctl answers are as long as libevdev's buffers, and every slot starts empty")
    func ioctlSizes() throws {
        let device = try #require(FixtureRecordings.recording(FixtureRecordings.atmelDrag).device)
        let export = UmockdevExport(device: device, eventNumber: 7)
        let ioctl = export.ioctlFile()
        #expect(ioctl.hasPrefix("@DEV /dev/input/event7\n"))
        let answers = Self.answers(ioctl)
        #expect(answers["EVIOCGNAME(0)"]?.bytes.count == 255)
        #expect(answers["EVIOCGNAME(0)"]?.result == "Atmel maXTouch Touchscreen".utf8.count + 1)
        #expect(answers["EVIOCGKEY(0)"]?.bytes.count == 96)
        #expect(answers["EVIOCGBIT(1)"]?.bytes.count == 96)
        #expect(answers["EVIOCGBIT(21)"]?.bytes.count == 16)
        for type in [0, 2, 3, 4, 5, 17, 18, 20] { #expect(answers["EVIOCGBIT(\(type))"]?.bytes.count == 8, "type \(type)") }
        #expect(answers["EVIOCGBIT(0)"]?.bytes == [0x0b, 0, 0, 0, 0, 0, 0, 0], "EV_SYN, EV_KEY, EV_ABS")
        #expect(answers["EVIOCGABS"]?.bytes.count == 24, "axis 0 has no number in umockdev's names")
        #expect(answers["EVIOCGABS(53)"]?.bytes == [0, 0, 0, 0, 0, 0, 0, 0, 0x1f, 0x03, 0, 0] + [UInt8](repeating: 0, count: 12))
        let slots = try #require(answers["EVIOCGMTSLOTS(0)"]?.bytes)
        #expect(slots.count == 4 * 257, "libevdev asks with room for 256 slots")
        #expect(slots[4...].allSatisfy { $0 == 0xff })
        #expect(answers["EVIOCGPROP(0)"]?.bytes == [0x02, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test("the device file makes a udev touchscreen at the node")
    func deviceFile() throws {
        let device = try #require(FixtureRecordings.recording(FixtureRecordings.pixel).device)
        let text = UmockdevExport(device: device, eventNumber: 51).deviceFile()
        for line in ["P: /devices/virtual/input/input51/event51", "N: input/event51", "E: DEVNAME=/dev/input/event51",
                     "E: ID_INPUT_TOUCHSCREEN=1", "E: PRODUCT=1c/603/7806/100", "E: NAME=\"NVTCapacitiveTouchScreen\""] {
            #expect(text.split(separator: "\n").contains(Substring(line)), "\(line)")
        }
        let ids = Self.answers(UmockdevExport(device: device).ioctlFile())["EVIOCGID"]?.bytes
        #expect(ids == [0x1c, 0, 0x03, 0x06, 0x06, 0x78, 0x00, 0x01])
    }

    @Test("the events file reads back as the same events, after the lead-in")
    func eventsRoundTrip() throws {
        let recording = try FixtureRecordings.recording(FixtureRecordings.ep0430)
        let back = try EvemuRecording(parsing: UmockdevExport.eventsFile(recording.events, leadIn: 0.5))
        #expect(back.events.count == recording.events.count)
        for (original, copy) in zip(recording.events, back.events) {
            #expect(copy.type == original.type && copy.code == original.code && copy.value == original.value)
            #expect(Swift.abs(copy.time - (original.time - recording.startTime + 0.5)) < 1e-6)
        }
    }
}
