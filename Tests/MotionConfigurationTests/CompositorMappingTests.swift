import Testing
@testable import MotionConfiguration

@Suite("What config mapping prints for a compositor to map a virtual touchscreen onto its output")
struct CompositorMappingTests {
    @Test("the udev rule matches the device by its name and sets WL_OUTPUT to the output")
    func udevRule() throws {
        let mapping = try CompositorMapping(output: "HDMI-A-1")
        #expect(mapping.deviceName == "motiond virtual touchscreen HDMI-A-1")
        #expect(mapping.udevRule == #"ACTION!="remove", KERNEL=="event*", SUBSYSTEM=="input", ATTRS{name}=="motiond virtual touchscreen HDMI-A-1", ENV{WL_OUTPUT}="HDMI-A-1""#)
    }

    @Test("sway's line names the device VENDOR:PRODUCT:NAME, the ids in decimal, the name's spaces as _")
    func swayLine() throws {
        let mapping = try CompositorMapping(output: "DP-2")
        #expect(mapping.swayLine == #"input "28015:29796:motiond_virtual_touchscreen_DP-2" map_to_output DP-2"#)
    }

    @Test("an output name that could end a udev value or sway's quoted identifier is refused, as the configuration refuses it",
          arguments: [#"HDMI-A-1", ENV{X}="1"#, #"DP-1\"#, "DP 1", "DP-1*", "", "Ü-1", String(repeating: "D", count: 41)])
    func hostileOutput(name: String) {
        #expect {
            _ = try CompositorMapping(output: name)
        } throws: { error in
            "\(error)".contains("an output's name")
        }
    }

    @Test("the rules file: a heading install recognizes, how to apply it, then one rule per output")
    func rulesFile() throws {
        let mappings = try ["HDMI-A-1", "DP-2"].map { name throws(CompositorMapping.UnsafeOutput) in try CompositorMapping(output: name) }
        let text = CompositorMapping.rulesFile(for: mappings, from: "/etc/motiond/motiond.toml")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5 && lines[4].isEmpty, "\(lines)")
        #expect(CompositorMapping.isWritten(Array(text.utf8.prefix(128))))
        #expect(lines[1].contains("udevadm control --reload && udevadm trigger"))
        #expect(Array(lines[2...3]) == mappings.map { Substring($0.udevRule) })
        #expect(CompositorMapping.isWritten([]) && !CompositorMapping.isWritten(Array("ACTION!=\"remove\"".utf8)))
    }
}
