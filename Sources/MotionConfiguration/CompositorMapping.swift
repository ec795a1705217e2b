import TouchInput
import TouchModel

/// What a compositor needs to map one virtual touchscreen onto its output: a compositor
/// cannot tell which output a touchscreen belongs to, and without being told, cage spreads
/// the touch over every output and weston drops it. `motionctl config mapping` prints these
/// from the configuration, so nobody works out ids or names by hand.
///
/// The output's name goes into a udev match, a udev value and sway's quoted identifier, so
/// only a name the configuration would take (``VirtualTouchscreenSettings/outputProblem(_:)``:
/// letters, digits, `-`, `_`) is accepted; a quote, a backslash or a space could end a value
/// early and add a match or an assignment of its own.
public struct CompositorMapping: Sendable, Hashable {
    /// Where the rules go: after `60-` so that udev's own input properties are set first.
    public static let defaultRulesFile = "/etc/udev/rules.d/61-motiond-virtual.rules"

    /// The output's name, as the compositor calls it (`HDMI-A-1`).
    public let output: String
    /// How the compositor is to turn the output (the configuration's `transform`).
    public let transform: OutputTransform

    /// Why `output` is refused: the reason ``VirtualTouchscreenSettings`` gives.
    public struct UnsafeOutput: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    public init(output: String, transform: OutputTransform = .normal) throws(UnsafeOutput) {
        if let problem = VirtualTouchscreenSettings.outputProblem(output) { throw UnsafeOutput(description: problem) }
        self.output = output
        self.transform = transform
    }

    /// sway's line turning the output as the configuration says; nil for an unturned one.
    public var swayOutputLine: String? {
        transform == .normal ? nil : "output \(output) transform \(transform.swayName)"
    }

    /// weston.ini's section turning the output as the configuration says; nil for an unturned one.
    public var westonOutputSection: String? {
        transform == .normal ? nil : "[output]\nname=\(output)\ntransform=\(transform.westonName)"
    }

    /// The name the device has in the kernel, which udev and the compositors see.
    public var deviceName: String { VirtualTouchscreen.namePrefix + " " + output }

    /// The udev rule setting `WL_OUTPUT`, which cage and weston (and sway, without an `input`
    /// line) read to map the device onto the output.
    public var udevRule: String {
        #"ACTION!="remove", KERNEL=="event*", SUBSYSTEM=="input", ATTRS{name}==""# + deviceName + #"", ENV{WL_OUTPUT}=""# + output + #"""#
    }

    /// sway's line for its config: sway names a device `VENDOR:PRODUCT:NAME`, the ids in
    /// decimal and the name's spaces as `_`.
    public var swayLine: String {
        let name = deviceName.replacingSpaces(with: "_")
        return "input \"\(VirtualTouchscreen.vendor):\(VirtualTouchscreen.product):\(name)\" map_to_output \(output)"
    }

    /// How a rules file written by ``rulesFile(for:from:)`` begins: what `--install` may replace.
    static let heading = "# Written by motionctl config mapping"

    /// Whether a file beginning with `start` is one `config mapping --install` wrote, or empty.
    public static func isWritten(_ start: [UInt8]) -> Bool {
        start.isEmpty || start.starts(with: heading.utf8)
    }

    /// The rules file for `mappings`, naming the configuration `file` they came from.
    public static func rulesFile(for mappings: [CompositorMapping], from file: String) -> String {
        var lines = [
            "\(heading) from \(OutsideText.quoted(file)): each virtual touchscreen's output, for cage, weston and sway.",
            "# Then: udevadm control --reload && udevadm trigger, and restart the compositor.",
        ]
        lines += mappings.map(\.udevRule)
        return lines.joined(separator: "\n") + "\n"
    }
}

private extension String {
    func replacingSpaces(with replacement: Character) -> String {
        String(map { $0 == " " ? replacement : $0 })
    }
}
