import Foundation
import Testing
@testable import MotionConfiguration

@Suite("The udev rule calibrate --export udev writes")
struct UdevCalibrationRuleTests {
    static let path = "pci-0000:00:14.0-usb-0:2:1.0"

    static func rule(path: String? = UdevCalibrationRuleTests.path, matrix: [Double] = [1.02, 0, -0.01, 0, 0.98, 0.005],
                     name: String = "Panel") throws(UdevCalibrationRule.Refusal) -> UdevCalibrationRule {
        try UdevCalibrationRule(name: name, node: "/dev/input/event5", path: path, matrix: matrix, note: "motiond's mapping in force")
    }

    @Test("two comment lines, then the rule: on event nodes of input devices, matched by ID_PATH, setting the matrix")
    func text() throws {
        let lines = try Self.rule().text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty, "\(lines)")
        #expect(lines[0].hasPrefix("# Written by motionctl calibrate --export udev for \"Panel\" (\"/dev/input/event5\")"))
        #expect(lines[1].hasPrefix("# Install as /etc/udev/rules.d/61-motiond-calibration-path-pci-0000-00-14-0-usb-0-2-1-0.rules, then: udevadm control --reload && udevadm trigger --action=change /dev/input/event5"))
        #expect(lines[2] == #"ACTION!="remove", SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_PATH}=="pci-0000:00:14.0-usb-0:2:1.0", ENV{LIBINPUT_CALIBRATION_MATRIX}="1.02 0 -0.01 0 0.98 0.005""#)
    }

    @Test("the file sorts after 60-persistent-input.rules, which sets ID_PATH, as udev orders /etc and /usr/lib together")
    func fileName() throws {
        let name = try Self.rule().fileName
        #expect(name.hasSuffix(".rules") && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
        #expect(name > "60-persistent-input.rules", "\(name)")
    }

    @Test("numbers: plain decimals with a point, nine places at most, no exponent, no -0", arguments: [
        (1.0, "1"), (0.0, "0"), (-0.0, "0"), (-1e-12, "0"), (1e-7, "0.0000001"),
        (-0.015, "-0.015"), (1.0 / 3, "0.333333333"), (-2.0 / 3, "-0.666666667"), (123456.75, "123456.75"), (0.9999999999, "1"),
    ])
    func numbers(value: Double, written: String) {
        #expect(UdevCalibrationRule.number(value) == written)
        #expect(Double(written).map { abs($0 - value) <= 5e-10 } == true)
    }

    @Test("the matrix reads back as six numbers separated by single spaces, within a billionth")
    func matrixReadsBack() throws {
        let matrix = [1.0 / 3, -1e-8, 0.1 + 0.2, 2.0 / 7, 1e5 / 3, -0.000123456789]
        let text = UdevCalibrationRule.matrixText(matrix)
        #expect(!text.contains("e") && !text.contains("E") && !text.contains(",") && !text.contains("  "))
        let read = text.split(separator: " ", omittingEmptySubsequences: false).compactMap { Double($0) }
        #expect(read.count == 6 && zip(read, matrix).allSatisfy { abs($0 - $1) <= 5e-10 }, "\(text)")
    }

    @Test("no ID_PATH (a virtual device), an empty one, one a udev match would read as a pattern, a matrix beyond numbers: refused")
    func refusals() {
        #expect(throws: UdevCalibrationRule.Refusal.noPath) { try Self.rule(path: nil) }
        #expect(throws: UdevCalibrationRule.Refusal.noPath) { try Self.rule(path: "") }
        for (path, character) in [("pci-*", "*"), ("a\"b", "\""), ("usb-0:1?", "?"), ("a|b", "|"), ("a b", " "), ("x\ny", "\n"), ("a$b", "$")] {
            #expect(throws: UdevCalibrationRule.Refusal.unsafePath(Character(character))) { try Self.rule(path: path) }
        }
        #expect(throws: UdevCalibrationRule.Refusal.unwritableNumber(.infinity)) { try Self.rule(matrix: [1, 0, .infinity, 0, 1, 0]) }
        #expect(throws: UdevCalibrationRule.Refusal.unwritableNumber(2e6)) { try Self.rule(matrix: [1, 0, 0, 0, 2e6, 0]) }
        #expect(throws: (any Error).self) { try Self.rule(matrix: [1, 0, .nan, 0, 1, 0]) }
    }

    @Test("a hostile panel name stays in its comment: quoted, escaped, one line")
    func hostileName() throws {
        let text = try Self.rule(name: "Evil\"\nACTION==\"add\", RUN+=\"/bin/sh\"").text
        #expect(text.split(separator: "\n").count == 3)
        #expect(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.allSatisfy { !$0.contains("RUN") })
    }
}
