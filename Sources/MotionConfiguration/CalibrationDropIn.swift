import MotionCore
import TouchInput

/// The drop-in `motionctl calibrate` writes for one panel: a `[[calibration]]` table that
/// selects that panel and no other, headed by a comment saying which panel and how it went.
///
/// Everything in it that came from the panel (its name) or the daemon (its node and path) is
/// outside text: the comment quotes it (``OutsideText/quoted(_:)``) and the selector writes it
/// as a TOML string (``TOMLText/string(_:)``), so whatever a USB descriptor says, the file is
/// valid TOML holding exactly this one table.
public struct CalibrationDropIn: Sendable {
    /// The rule that selects the panel: where it is plugged in (udev's `ID_PATH`) when udev
    /// says, which tells two panels of one model apart; else its ids when it has them (some
    /// report 0000:0000); else its name, as ``glob(matching:)`` writes it.
    public let rule: DeviceSelection.Rule
    /// The matrix, as `LIBINPUT_CALIBRATION_MATRIX` orders it.
    public let matrix: [Double]
    private let name: String
    private let node: String
    private let note: String

    /// A drop-in for the panel called `name`, read at `node`, plugged in at `path` (nil or
    /// empty when udev does not say) with ids `vendor:product`; `note` says how the
    /// calibration went, in motionctl's words.
    public init(name: String, node: String, path: String?, vendor: UInt16, product: UInt16, matrix: [Double], note: String) {
        if let path, !path.isEmpty, !path.contains("\0") {
            rule = .path(path)
        } else if vendor != 0 || product != 0 {
            rule = .ids(vendor: vendor, product: product)
        } else {
            rule = .name(Self.glob(matching: name))
        }
        self.matrix = matrix
        self.name = name
        self.node = node
        self.note = note
    }

    /// `90-calibration-…toml`, a file per panel that the next calibration of it replaces:
    /// `90-calibration-path-pci-0000-00-14-0-usb-0-2-1-0.toml` by where it is plugged in,
    /// `90-calibration-04f3-010c.toml` by ids, else after its name; everything but ASCII
    /// letters and digits made `-`, so the name is safe in any shell.
    public var fileName: String {
        let sanitized = { (text: String) in
            String(text.unicodeScalars.map { Self.keeps($0) ? String($0) : "-" }.joined().lowercased().prefix(120))
        }
        switch rule {
        case .path(let path): return "90-calibration-path-\(sanitized(path)).toml"
        case .ids: return "90-calibration-\(rule.value.replacing(":", with: "-")).toml"
        case .node, .name: return "90-calibration-\(sanitized(name)).toml"
        }
    }

    /// A glob that matches `name`: the name itself, but for each character holding `*` (the
    /// glob's "any characters") or NUL (which no TOML reader here carries: TOMLKit's strings
    /// end at it), which stands as `?`. The glob matches characters as Swift sees them
    /// (grapheme clusters), and a `?` put where a lone control was can join the combining
    /// mark after it into one character; where that breaks the match, every character
    /// stands as `?`, which still picks only names as long as this one.
    public static func glob(matching name: String) -> String {
        let pattern = String(name.map { $0.unicodeScalars.contains { $0 == "*" || $0 == "\0" } ? "?" : $0 })
        if globMatches(Substring(pattern), Substring(name)) { return pattern }
        return String(repeating: "?", count: name.count)
    }

    /// The file's text.
    public var text: String {
        """
        # Written by motionctl calibrate for \(OutsideText.quoted(name)) (\(OutsideText.quoted(node))): \(OutsideText.escaped(note)).
        # It replaces the calibration of whichever [[device]] entry maps this touchscreen.
        [[calibration]]
        \(rule.key) = \(TOMLText.string(rule.value))
        matrix = [\(matrix.map(compactNumber).joined(separator: ", "))]

        """
    }

    /// Whether a file name keeps `scalar` (others become "-"): ASCII letters and digits, so
    /// the name is safe in any shell and on any file system.
    private static func keeps(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}

/// Writing TOML, for the few files motiond's tools write.
public enum TOMLText {
    /// `text` as a TOML basic string: in double quotes, with `"` and `\` escaped, and every
    /// character TOML forbids there (controls other than tab, and DEL) or that is not plainly
    /// visible escaped as `\uXXXX` or `\UXXXXXXXX`. The string reads back as `text` exactly,
    /// but for NUL: TOML allows `\u0000`, and TOMLKit's reader ends the string there.
    public static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where OutsideText.needsEscape(scalar):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += scalar.value <= 0xFFFF ? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                                                 : "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
