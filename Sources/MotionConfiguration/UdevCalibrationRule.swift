import TouchModel

/// The udev rule `motionctl calibrate --export udev` writes for one panel: it sets
/// `LIBINPUT_CALIBRATION_MATRIX` on the panel's event node, selected by where it is plugged in
/// (udev's `ID_PATH`), so that a libinput compositor calibrates the panel itself, with motiond
/// out of the path: the fallback when there is no virtual device to hand motiond's touches on.
///
/// The text is built from the panel's path, the matrix and outside text (the panel's name,
/// quoted in a comment only); a path that a udev match could read as a pattern or that could
/// end the quoted value is refused, so the rule matches exactly one path and nothing else.
public struct UdevCalibrationRule: Sendable, Hashable {
    /// Where the rule goes. `ID_PATH` is set by systemd's `60-persistent-input.rules`, and
    /// udev reads the files of `/etc/udev/rules.d` and `/usr/lib/udev/rules.d` in one order,
    /// by name: a name after `60-` sees `ID_PATH`; one before it would never match.
    public static let directory = "/etc/udev/rules.d"

    /// udev's `ID_PATH` of the panel.
    public let path: String
    /// The matrix, in `LIBINPUT_CALIBRATION_MATRIX`'s order.
    public let matrix: [Double]
    private let name: String
    private let node: String
    private let note: String

    /// Why no rule can be written.
    public enum Refusal: Error, Hashable, Sendable {
        /// udev gives the device no `ID_PATH` (a virtual device: uinput, a replay).
        case noPath
        /// The path holds a character a udev match reads as a pattern or an end of value.
        case unsafePath(Character)
        /// A number of the matrix is not finite, or too large for any touchscreen.
        case unwritableNumber(Double)
    }

    /// The rule for the panel called `name` at `node`, plugged in at `path` (nil when udev
    /// does not say), to be calibrated by `matrix`; `note` says where the matrix came from,
    /// in motionctl's words, for the comment.
    public init(name: String, node: String, path: String?, matrix: [Double], note: String) throws(Refusal) {
        precondition(matrix.count == 6, "a calibration matrix has six numbers")
        guard let path, !path.isEmpty else { throw .noPath }
        if let unsafe = path.first(where: { !Self.safeInPath($0) }) { throw .unsafePath(unsafe) }
        if let unwritable = matrix.first(where: { !($0.magnitude < Self.largest) }) { throw .unwritableNumber(unwritable) }
        self.path = path
        self.matrix = matrix
        self.name = name
        self.node = node
        self.note = note
    }

    /// `61-motiond-calibration-…rules`, a file per panel that the next export for it
    /// replaces, named after its path with everything but ASCII letters and digits made `-`
    /// (as ``CalibrationDropIn``'s names are): `61-` sorts after `60-persistent-input.rules`.
    public var fileName: String {
        let sanitized = path.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) ? String($0) : "-" }
        return "61-motiond-calibration-path-\(String(sanitized.joined().lowercased().prefix(120))).rules"
    }

    /// How the file's text begins.
    static let heading = "# Written by motionctl calibrate --export udev"

    /// Whether a file beginning with `start` is one an export wrote, or empty: what an export
    /// may replace. A configuration, another rule file, or anything else is left alone.
    public static func isExported(_ start: [UInt8]) -> Bool {
        start.isEmpty || start.starts(with: heading.utf8)
    }

    /// The file's text: two comment lines (what made it, how to apply it) and the rule.
    public var text: String {
        """
        \(Self.heading) for \(OutsideText.quoted(name)) (\(OutsideText.quoted(node))): \(OutsideText.escaped(note)).
        # Install as \(Self.directory)/\(fileName), then: udevadm control --reload && udevadm trigger --action=change \(OutsideText.escaped(node)); libinput reads it only when it adds the panel, so restart the compositor (or replug the panel).
        ACTION!="remove", SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_PATH}=="\(path)", ENV{LIBINPUT_CALIBRATION_MATRIX}="\(Self.matrixText(matrix))"

        """
    }

    /// The six numbers as libinput parses them: separated by single spaces, each in plain
    /// decimal notation (``number(_:)``).
    public static func matrixText(_ matrix: [Double]) -> String {
        matrix.map(number).joined(separator: " ")
    }

    /// Digits after the point: a nanometre's worth of a unit, far below a pixel on any screen
    /// (a billionth of 8K is 8 millionths of a pixel).
    static let decimals = 9

    /// Magnitudes at and above this are refused: no calibration scales a panel a million
    /// times, and below it the digits fit an `Int64` at ``decimals`` places.
    static let largest = 1e6

    /// `value` in plain decimal notation: a `.` whatever the locale, never an exponent,
    /// ``decimals`` places at most with the trailing zeros dropped, and no `-0`. Written with
    /// integer arithmetic, not printf, whose `%g` switches to exponents and whose decimal
    /// point follows `LC_NUMERIC`; libinput parses numbers the C locale's way.
    public static func number(_ value: Double) -> String {
        precondition(value.magnitude < largest, "matrix numbers are checked before they are written")
        let scale = Int64(1_000_000_000)
        let scaled = Int64((value.magnitude * Double(scale)).rounded())
        guard scaled != 0 else { return "0" }
        let whole = scaled / scale
        var fraction = String(scaled % scale)
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return (value < 0 ? "-" : "") + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// Whether `character` may stand in the path of a rule: ASCII letters, digits and the
    /// punctuation udev's path_id writes. Not `*`, `?`, `[`, `|` (a match's pattern), `"`,
    /// `\`, `$`, `%`, spaces or controls.
    static func safeInPath(_ character: Character) -> Bool {
        guard character.isASCII, let scalar = character.unicodeScalars.first else { return false }
        return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.:+/@,".unicodeScalars.contains(scalar)
    }
}
