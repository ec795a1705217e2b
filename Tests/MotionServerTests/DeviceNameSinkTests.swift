import Foundation
import Logging
import MotionCore
import NIOCore
import DaemonTestSupport
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire

/// Names a USB descriptor can hold: each would break out of a line, a comment, a string or a
/// terminal if written as it is. Invalid UTF-8 arrives as libevdev's and the evemu reader's
/// decoding leaves it: U+FFFD.
let hostileNames: [String] = [
    "Evil Panel\n[daemon]\ncontrol_groups = [\"users\"] #",
    "Evil Panel\r\n[[tuio]]\ntarget = \"203.0.113.9:3333\"",
    "<3>motiond: everything is fine",
    "Panel\n<3>forged error line",
    "quote \" and back\\slash \\\" end",
    "DEL\u{7F} NUL\u{0} BEL\u{7} ESC\u{1B}[2J C1\u{85}\u{9B}",
    String(decoding: [0x42, 0x61, 0x64, 0xFF, 0xFE, 0x20, 0xC3, 0x28, 0x55, 0x54, 0x46], as: UTF8.self),
    "\u{202E}lenaP liveE\u{2028}next\u{2029}para\u{200B}",
    "tab\there * and ? globs",
    // A `?` written for `*` or NUL joins a combining mark after it into one character.
    "star*\u{7EB} and nul\0\u{301}",
]

/// Whether `text` holds a character that could end a line, fake a journal priority at a
/// line's start, or drive a terminal.
private func hasUnsafeCharacter(_ text: String) -> Bool {
    text.unicodeScalars.contains(where: OutsideText.needsEscape)
}

@Suite("A device's name, written everywhere motiond writes text")
struct DeviceNameSinkTests {
    @Test("quoted: one line, nothing unescaped, and each hostile name tells apart from the others")
    func quoting() {
        for name in hostileNames {
            let quoted = OutsideText.quoted(name)
            #expect(!hasUnsafeCharacter(quoted), "\(quoted)")
            #expect(quoted.hasPrefix("\"") && quoted.hasSuffix("\""))
            // Inside the quotes, every quote is escaped: the quoted text cannot be ended early.
            let inner = quoted.dropFirst().dropLast()
            var escaped = false
            for character in inner {
                if character == "\"" { #expect(escaped, "an unescaped quote in \(quoted)") }
                escaped = character == "\\" && !escaped
            }
        }
        #expect(Set(hostileNames.map(OutsideText.quoted)).count == hostileNames.count)
        #expect(OutsideText.quoted("a\n\"b\"\\\u{7F}") == #""a\n\"b\"\\\u{7F}""#)
        #expect(OutsideText.quoted("ELAN Touchscreen (04f3:2a1c) – ümlaut 触摸") == "\"ELAN Touchscreen (04f3:2a1c) – ümlaut 触摸\"",
                "printable text, accents and scripts included, is left as it is")
    }

    @Test("the journal gets one line per message, with motiond's priority and no other")
    func journal() {
        for name in hostileNames {
            // A message as the daemon words it, the name quoted.
            let line = JournalLogHandler.line(level: .info, message: "using /dev/input/event5 (\(OutsideText.quoted(name))), output [0, 0, 1920, 1080]")
            #expect(line.hasPrefix("<6>using /dev/input/event5 (\""))
            #expect(line.hasSuffix("\n") && line.dropLast().firstIndex(of: "\n") == nil, "\(line)")
            #expect(!hasUnsafeCharacter(String(line.dropLast())))
        }
        // Even a message that did not quote what it holds stays one line.
        let raw = JournalLogHandler.line(level: .warning, message: "Panel\n<3>forged\r\u{1B}[2K")
        #expect(raw == "<4>Panel\\n<3>forged\\r\\u{1B}[2K\n")
    }

    @Test("the calibration drop-in loads as exactly its one table, selecting the panel, whatever the panel is called")
    func dropIn() throws {
        let matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
        for name in hostileNames {
            for (path, ids) in [(nil, (UInt16(0), UInt16(0))), (nil, (0x04f3, 0x2a1c)), ("pci-0000:00:14.0-usb-0:2:1.0", (0x04f3, 0x2a1c))] as [(String?, (UInt16, UInt16))] {
                let dropIn = CalibrationDropIn(name: name, node: "/dev/input/event5", path: path, vendor: ids.0, product: ids.1, matrix: matrix, note: "5 targets")
                let configuration = try Configuration.parse([(text: "[daemon]\nsocket = \"/run/m.sock\"\n", file: "motiond.toml"), (text: dropIn.text, file: "conf.d/" + dropIn.fileName)])
                #expect(configuration.calibrations.map(\.matrix) == [matrix])
                #expect(configuration.daemon.controlGroups.isEmpty && configuration.tuio.isEmpty && configuration.devices.isEmpty)
                #expect(dropIn.text.split(separator: "\n").count == 5, "two comment lines, the table, its selector and its matrix:\n\(dropIn.text)")
                #expect(!dropIn.fileName.contains("/") && !dropIn.fileName.hasPrefix(".") && dropIn.fileName.allSatisfy { $0.isASCII })
                var device = DeviceDescription(name: name)
                (device.vendor, device.product) = ids
                #expect(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event5", path: path, description: device))?.calibrationRule == dropIn.rule)
                if path != nil { #expect(dropIn.rule == .path(path!)) } else if ids.0 != 0 { #expect(dropIn.rule == .ids(vendor: ids.0, product: ids.1)) }
            }
        }
    }

    @Test("a TOML string written for outside text reads back as that text exactly")
    func tomlStrings() throws {
        // NUL aside: TOMLKit ends a string there (the drop-in writes it as `?`, tested above).
        for name in hostileNames.map({ $0.replacing("\0", with: "") }) + ["", "\u{10FFFF}\u{E000}", "\u{1F600} emoji"] {
            let configuration = try Configuration.parse("[[device]]\nname = \(TOMLText.string(name))\n", file: "t.toml")
            #expect(configuration.devices.first?.selection == DeviceSelection([.name(name)]))
        }
    }

    @Test("protocol lines carry the name exactly, as JSON, on one line")
    func protocolLines() throws {
        let (daemon, _) = try makeDaemon()
        let client = RecordingOutput()
        let session = daemon.connect(client, credentials: nil)
        for (index, name) in hostileNames.enumerated() {
            var panel = DeviceDescription(name: name)
            panel.properties = [InputProperty.direct]
            panel.codes[EventType.absolute] = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
            panel.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
            panel.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: 799)
            panel.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: 479)
            let device = DeviceIdentity(number: index, node: "/dev/input/event\(index)", description: panel)
            daemon.input(.added(device, panel, DeviceSetup(panel, mapping: OutputMapping(), filters: ContactFilterSettings())))
        }
        daemon.receive(#"{"id": 1, "op": "devices"}"#, from: session)
        for line in client.lines {
            #expect(line.hasSuffix("\n") && !line.dropLast().contains { $0 == "\n" || $0 == "\r" || $0 == "\u{2028}" }, "\(line)")
        }
        let messages = try client.take()
        #expect(messages.filter { $0["event"]?.string == "device" }.compactMap { $0["name"]?.string } == hostileNames)
        let reply = try #require(messages.first { $0["id"]?.integer == 1 })
        #expect(reply["result"]?["devices"]?.array?.compactMap { $0["name"]?.string } == hostileNames)
    }

    @Test("a metric's device label is escaped as Prometheus's text format asks, one sample per line")
    func metricLabels() throws {
        let (daemon, _) = try makeDaemon()
        let node = "replay:/tmp/bug \"report\"\\\n<3>.evemu"
        addTestPanel(to: daemon, node: node)
        let text = String(decoding: daemon.metricsExposition(), as: UTF8.self)
        let sample = try #require(text.split(separator: "\n").first { $0.hasPrefix("motiond_input_frames_total{") })
        #expect(sample == #"motiond_input_frames_total{device="replay:/tmp/bug \"report\"\\\n<3>.evemu"} 0"#)
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("<3>") || $0.hasPrefix(".evemu") })
    }

    @Test("a recording written of a hostile panel keeps one line per header field and reads back")
    func recordings() throws {
        for name in hostileNames {
            var panel = DeviceDescription(name: name)
            panel.properties = [InputProperty.direct]
            panel.codes[EventType.absolute] = [AbsoluteAxis.slot, AbsoluteAxis.trackingID, AbsoluteAxis.positionX, AbsoluteAxis.positionY]
            panel.codes[EventType.key] = [KeyCode.touch]
            panel.axes[AbsoluteAxis.slot] = AxisInfo(minimum: 0, maximum: 9)
            panel.axes[AbsoluteAxis.trackingID] = AxisInfo(minimum: 0, maximum: 65535)
            panel.axes[AbsoluteAxis.positionX] = AxisInfo(minimum: 0, maximum: 799)
            panel.axes[AbsoluteAxis.positionY] = AxisInfo(minimum: 0, maximum: 479)
            let header = EvemuWriter.header(panel)
            let read = try #require(try EvemuRecording(parsing: header).device)
            #expect(read.name == OutsideText.escaped(name))
            #expect(read.axes == panel.axes && read.codes == panel.codes && read.properties == panel.properties)
            let umockdev = UmockdevExport(device: panel).deviceFile()
            for line in umockdev.split(separator: "\n") {
                #expect(["P: ", "N: ", "E: ", "A: "].contains { line.hasPrefix($0) }, "\(line)")
                #expect(!hasUnsafeCharacter(String(line)))
            }
        }
    }
}
