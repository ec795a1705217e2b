import Foundation
import Testing

@Suite("motionctl config mapping, and config check's advice on mapping")
struct ConfigMappingCommandTests {
    static let hdmiRule = #"ACTION!="remove", KERNEL=="event*", SUBSYSTEM=="input", ATTRS{name}=="motiond virtual touchscreen HDMI-A-1", ENV{WL_OUTPUT}="HDMI-A-1""#
    static let dpRule = #"ACTION!="remove", KERNEL=="event*", SUBSYSTEM=="input", ATTRS{name}=="motiond virtual touchscreen DP-2", ENV{WL_OUTPUT}="DP-2""#
    static let twoOutputs = """
        [[virtual_touchscreen]]
        output = "HDMI-A-1"

        [[device]]
        name = "ELAN*"
        virtual_touchscreen = "DP-2"

        """

    /// A configuration file holding `text`, in a directory of its own.
    static func configuration(_ text: String) throws -> (directory: URL, file: String) {
        let directory = try EndToEnd.scratch()
        let file = directory.appendingPathComponent("motiond.toml").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return (directory, file)
    }

    @Test("prints, for each output (a table's and a [[device]]'s), the WL_OUTPUT rule and sway's line, and says weston reads the rule")
    func printed() throws {
        let (directory, file) = try Self.configuration(Self.twoOutputs)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["config", "mapping", file])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.lines
        let rules = try #require(lines.firstIndex { $0.hasPrefix("udev rules") })
        #expect(lines[rules].hasSuffix("for /etc/udev/rules.d/61-motiond-virtual.rules:"), "\(lines[rules])")
        #expect(Array(lines[(rules + 1)...(rules + 2)]) == [Self.hdmiRule, Self.dpRule], "\(run.output)")
        let sway = try #require(lines.firstIndex { $0.hasPrefix("sway") })
        #expect(Array(lines[(sway + 1)...(sway + 2)]) == [#"input "28015:29796:motiond_virtual_touchscreen_HDMI-A-1" map_to_output HDMI-A-1"#,
                                                        #"input "28015:29796:motiond_virtual_touchscreen_DP-2" map_to_output DP-2"#], "\(run.output)")
        #expect(lines.contains { $0.hasPrefix("weston: reads WL_OUTPUT from udev") }, "\(run.output)")
    }

    @Test("an output the configuration turns: sway's output line with sway's name for the turn (a quarter turn the other way), weston.ini's section with weston's")
    func turnedOutput() throws {
        let (directory, file) = try Self.configuration("[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\ntransform = \"90\"\n\n[[virtual_touchscreen]]\noutput = \"DP-2\"\ntransform = \"flipped-180\"\n\n[[virtual_touchscreen]]\noutput = \"DP-3\"\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["config", "mapping", file])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.lines.contains("output HDMI-A-1 transform 270") && run.lines.contains("output DP-2 transform flipped-180"), "\(run.output)")
        #expect(!run.lines.contains { $0.hasPrefix("output DP-3") }, "an unturned output needs no line: \(run.output)")
        let weston = try #require(run.lines.firstIndex { $0.hasPrefix("weston.ini") }, "\(run.output)")
        #expect(Array(run.lines[(weston + 1)...]) == ["[output]", "name=HDMI-A-1", "transform=rotate-90", "[output]", "name=DP-2", "transform=flipped-rotate-180"], "\(run.output)")
    }

    @Test("config check says, for each virtual touchscreen, how its output is turned and how touches taken away end")
    func checkSaysTransformAndEnding() throws {
        let (directory, file) = try Self.configuration("[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\ntransform = \"rotate-270\"\n\n[[virtual_touchscreen]]\noutput = \"DP-2\"\ncancel = \"cancel\"\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["config", "check", file])
        #expect(run.status == 0, "\(run.error)")
        let hdmi = try #require(run.lines.first { $0.hasPrefix("virtual touchscreen: motiond virtual touchscreen HDMI-A-1") })
        #expect(hdmi.contains("output turned 270") && hdmi.contains("touches taken away withdrawn"), "\(hdmi)")
        let dp = try #require(run.lines.first { $0.hasPrefix("virtual touchscreen: motiond virtual touchscreen DP-2") })
        #expect(!dp.contains("turned") && dp.contains("touches taken away cancelled"), "\(dp)")
    }

    @Test("the rule and sway's line are the ones docs/virtual-touchscreen.md gives")
    func documented() throws {
        let (directory, file) = try Self.configuration("[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["config", "mapping", file])
        let doc = try String(contentsOf: EndToEnd.repository.appendingPathComponent("docs/virtual-touchscreen.md"), encoding: .utf8)
        let sway = try #require(run.lines.first { $0.hasPrefix("input ") })
        #expect(doc.contains("\n" + Self.hdmiRule + "\n") && doc.contains("`" + sway + "`"), "\(run.output)")
    }

    @Test("an output name with a quote, a backslash or a space is refused at its line, and no rule is printed",
          arguments: [#"HDMI-A-1\", ENV{X}=\"1"#, #"DP-1\\"#, "DP 1"])
    func hostileOutput(name: String) throws {
        let (directory, file) = try Self.configuration("[[virtual_touchscreen]]\noutput = \"\(name)\"\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["config", "mapping", file, "--install", "--rules", directory.appendingPathComponent("rules").path])
        #expect(run.status == 1 && run.error.hasPrefix("\(file):2:") && run.error.contains("an output's name is ASCII letters"), "\(run.error)")
        #expect(run.output.isEmpty && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("rules").path))
    }

    @Test("a configuration without a virtual touchscreen has nothing to map, and says so")
    func nothingToMap() throws {
        let (directory, file) = try Self.configuration("[[device]]\nname = \"ELAN*\"\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Run("motionctl", ["config", "mapping", file])
        #expect(run.status == 1 && run.error.contains("defines no virtual touchscreen"), "\(run.error)")
    }

    @Test("--install writes the rules, replaces a file it wrote, and leaves a symbolic link or another file alone")
    func install() throws {
        let (directory, file) = try Self.configuration(Self.twoOutputs)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rules = directory.appendingPathComponent("61-motiond-virtual.rules").path
        let first = try Run("motionctl", ["config", "mapping", file, "--install", "--rules", rules])
        #expect(first.status == 0 && first.output.contains("udevadm control --reload && udevadm trigger"), "\(first.error)")
        let written = try String(contentsOfFile: rules, encoding: .utf8).split(separator: "\n")
        #expect(written.count == 4 && written[0].hasPrefix("# Written by motionctl config mapping") && written[2...].map(String.init) == [Self.hdmiRule, Self.dpRule], "\(written)")
        let again = try Run("motionctl", ["config", "mapping", file, "--install", "--rules", rules])
        #expect(again.status == 0, "\(again.error)")

        let target = directory.appendingPathComponent("motiond.toml").path, link = directory.appendingPathComponent("link.rules").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let linked = try Run("motionctl", ["config", "mapping", file, "--install", "--rules", link])
        #expect(linked.status == 1 && linked.error.contains("left alone"), "\(linked.error)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == Self.twoOutputs)

        let other = directory.appendingPathComponent("70-other.rules").path
        try "SUBSYSTEM==\"input\", GROUP=\"input\"\n".write(toFile: other, atomically: true, encoding: .utf8)
        let foreign = try Run("motionctl", ["config", "mapping", file, "--install", "--rules", other])
        #expect(foreign.status == 1 && foreign.error.contains("left alone"), "\(foreign.error)")
        #expect(try String(contentsOfFile: other, encoding: .utf8) == "SUBSYSTEM==\"input\", GROUP=\"input\"\n")
    }

    @Test("config check warns when two or more virtual touchscreens need mapping, notes it for one, and says nothing for none")
    func checkAdvice() throws {
        let (directory, file) = try Self.configuration(Self.twoOutputs)
        defer { try? FileManager.default.removeItem(at: directory) }
        let two = try Run("motionctl", ["config", "check", file])
        #expect(two.status == 0, "\(two.error)")
        #expect(two.lines.contains("warning: 2 virtual touchscreens: the compositor must be told each one's output, or it spreads their touches over every output (cage) or drops them (weston); motionctl config mapping \(file) prints the udev rules and sway lines"), "\(two.output)")
        try "[[virtual_touchscreen]]\noutput = \"HDMI-A-1\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let one = try Run("motionctl", ["config", "check", file])
        #expect(!one.output.contains("warning:") && one.output.contains("mapping: with more than one output") && one.output.contains("motionctl config mapping \(file)"), "\(one.output)")
        try "[[device]]\nname = \"ELAN*\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let none = try Run("motionctl", ["config", "check", file])
        #expect(none.status == 0 && !none.output.contains("config mapping"), "\(none.output)")
    }
}
