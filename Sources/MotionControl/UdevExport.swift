import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import TouchInput
import TouchModel
import MotionWire

/// What `motionctl calibrate --export` writes.
enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    /// A udev rule setting `LIBINPUT_CALIBRATION_MATRIX`.
    case udev
}

/// `motionctl calibrate --export udev`: the fallback for a kiosk whose compositor reads the
/// panel itself, through libinput, with no virtual device for motiond to hand touches on.
///
/// The matrix is the mapping in force in the running daemon, not a new calibration and not
/// the configuration file read again: what `motionctl calibrate` fitted and checked on the
/// screen, with the rotation and flips the panel is mounted with, exactly as motiond applies
/// them now. So the steps are: calibrate (and check by touch) with motiond, export, install.
struct UdevExport {
    let command: CalibrateCommand
    let connection: DaemonConnection

    init(command: CalibrateCommand) {
        self.command = command
        switch command.socket.connectIfAnswering() {
        case .success(let connection): self.connection = connection
        case .failure(let error):
            writeStandardError("""
                motionctl: calibrate --export reads the mapping in force from motiond, which does not answer at \(command.socket.path): \(error); start motiond with the configuration that calibrates the panel

                """)
            Glibc.exit(ExitStatus.cannotConnect)
        }
    }

    func run() throws {
        let panel = try DaemonTouchscreen.choose(command.device, from: connection, doing: "export")
        let matrix = panel.mapping.libinputMatrix
        let rule: UdevCalibrationRule
        do throws(UdevCalibrationRule.Refusal) {
            rule = try UdevCalibrationRule(name: panel.name, node: panel.node, path: panel.path, matrix: matrix, note: Self.note(panel.mapping))
        } catch {
            fail(Self.refusal(error, panel: panel, matrix: matrix))
        }
        for line in Self.caveats(panel) { writeStandardError("motionctl: \(line)\n") }
        guard let output = command.output, output != "-" else { return emit(String(rule.text.dropLast())) }
        do throws(TrustedFileError) {
            try TrustedFile(path: output).replace(with: Array(rule.text.utf8), mode: 0o644, recognizing: UdevCalibrationRule.isExported)
        } catch {
            fail("motionctl: \(error); --output writes a new file or replaces a rule motionctl wrote (or an empty file), and - writes to standard output")
        }
        writeStandardError("motionctl: wrote \(output); udevadm control --reload && udevadm trigger --action=change \(panel.node) applies it, then restart the compositor\n")
    }

    /// Where the matrix came from, for the rule's comment.
    static func note(_ mapping: OutputMapping) -> String {
        var steps = ["calibration " + UdevCalibrationRule.matrixText(mapping.calibration)]
        if mapping.flipHorizontal { steps.append("flipped left to right") }
        if mapping.flipVertical { steps.append("flipped top to bottom") }
        if mapping.rotation != .none { steps.append("rotated \(mapping.rotation.rawValue)° clockwise") }
        return "motiond's mapping in force: " + steps.joined(separator: ", ")
    }

    /// What the rule cannot carry, and what to mind with it; one line each, for standard error.
    static func caveats(_ panel: DaemonTouchscreen) -> [String] {
        let rectangle = DeviceText.rectangle(panel.output)
        var lines = [
            "the rule holds motiond's calibration, flips and rotation; not its output rectangle \(rectangle): a libinput compositor maps the panel onto a display itself (sway: input … map_to_output, weston: WL_OUTPUT, GNOME: Settings, Displays; X11: xinput map-to-output), so map it onto the display that shows \(rectangle)",
            "nor motiond's filters (stuck contacts, palms, jumps, hysteresis, protocol A lifts): without motiond in the path, the compositor gets the panel's contacts as they are",
        ]
        if panel.mapping.rotation != .none || panel.mapping.flipHorizontal || panel.mapping.flipVertical {
            lines.append("while motiond still reads this panel, keep its calibration in motiond.toml: motiond takes udev's LIBINPUT_CALIBRATION_MATRIX only when its configuration gives none, and would then rotate and flip it a second time")
        }
        return lines
    }

    /// Why there is no rule, and what a rule could select instead.
    static func refusal(_ error: UdevCalibrationRule.Refusal, panel: DaemonTouchscreen, matrix: [Double]) -> String {
        let known = matrix.allSatisfy { $0.magnitude < 1e6 } ? " with ENV{LIBINPUT_CALIBRATION_MATRIX}=\"\(UdevCalibrationRule.matrixText(matrix))\"" : ""
        let hex = { (value: Int) in let digits = String(value, radix: 16); return String(repeating: "0", count: Swift.max(0, 4 - digits.count)) + digits }
        let ids = hex(panel.ids.vendor) + ":" + hex(panel.ids.product)
        switch error {
        case .noPath:
            return """
                motionctl: \(panel.node) (\(OutsideText.quoted(panel.name))) has no ID_PATH in udev (a virtual device, uinput or a replay, is plugged in nowhere), so no rule can select it by where it is plugged in; \
                a rule could match its name (ATTRS{name}) or its ids \(ids) (ATTRS{id/vendor}, ATTRS{id/product}), which every panel of that model shares: write one by hand\(known)
                """
        case .unsafePath(let character):
            return "motionctl: \(panel.node)'s ID_PATH \(OutsideText.quoted(panel.path ?? "")) holds \(OutsideText.quoted(String(character))), which a udev match reads as a pattern or the end of its value; no rule is written"
        case .unwritableNumber(let value):
            return "motionctl: the matrix of \(panel.node) has \(value), which is no calibration libinput can be given; no rule is written"
        }
    }
}
