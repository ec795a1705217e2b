import ArgumentParser
import MotionConfiguration

/// `motionctl config mapping FILE`: what each compositor needs to map each virtual
/// touchscreen of a configuration onto its output, printed, or the udev rules installed.
///
/// It reads the configuration, not the compositor's: whether the compositor already maps the
/// devices is for the user to check; this says what to add.
struct ConfigMappingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mapping",
        abstract: "Print what each compositor needs to map each virtual touchscreen onto its output.",
        discussion: """
            For each [[virtual_touchscreen]] (and each output a [[device]] names with \
            virtual_touchscreen): the udev rule setting WL_OUTPUT, which cage and weston read \
            (and sway, without an input line), and sway's input … map_to_output line. With \
            --install, the udev rules are written to --rules, replacing only a file this \
            command wrote (or an empty one), never following a symbolic link.
            """
    )

    @Argument(help: "The configuration file.") var file: String
    @Flag(help: "Write the udev rules to the --rules file instead of printing them.") var install = false
    @Option(help: ArgumentHelp("Where --install writes the udev rules.", valueName: "FILE")) var rules = CompositorMapping.defaultRulesFile

    func run() throws {
        let configuration = try loadConfiguration(file)
        guard !configuration.virtualTouchscreens.isEmpty else {
            fail("motionctl: \(file) defines no virtual touchscreen: the compositor reads the panels themselves, and maps them as its own settings say")
        }
        let mappings = configuration.virtualTouchscreens.map { virtual in
            do throws(CompositorMapping.UnsafeOutput) {
                return try CompositorMapping(output: virtual.output, transform: virtual.transform)
            } catch {
                fail("motionctl: \(virtual.definedAt ?? file): \(error)")
            }
        }
        if install { return write(mappings) }
        emit("udev rules (cage and weston read WL_OUTPUT; so does sway, without an input line), for \(rules):")
        for mapping in mappings { emit(mapping.udevRule) }
        emit("then: udevadm control --reload && udevadm trigger, and restart the compositor (motionctl config mapping --install writes the file)")
        emit("")
        emit("sway, in its config (instead of the udev rules):")
        for mapping in mappings { emit(mapping.swayLine) }
        for line in mappings.compactMap(\.swayOutputLine) { emit(line) }
        emit("")
        emit("weston: reads WL_OUTPUT from udev: the rules above; it drops touch from a device with no output")
        let sections = mappings.compactMap(\.westonOutputSection)
        if !sections.isEmpty {
            emit("weston.ini, turning the outputs as the configuration's transform says:")
            for section in sections { emit(section) }
        }
    }

    private func write(_ mappings: [CompositorMapping]) {
        let text = CompositorMapping.rulesFile(for: mappings, from: file)
        do throws(TrustedFileError) {
            try TrustedFile(path: rules).replace(with: Array(text.utf8), mode: 0o644, recognizing: CompositorMapping.isWritten)
        } catch {
            fail("motionctl: \(error); --install writes a new file or replaces one it wrote (or an empty file)")
        }
        emit("wrote \(rules) (\(mappings.map(\.output).joined(separator: ", "))); udevadm control --reload && udevadm trigger applies it, then restart the compositor")
    }
}
